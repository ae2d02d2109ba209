import type { KeyObject } from 'node:crypto';
import { checkTimestamp, hmacKey, toBytes } from '../shared.ts';
import type { SignedRequest } from '../types.ts';
import { hmacOf } from '../signature-kernel.ts';
import { checkHmac, signatureHeader, signedTimestampHeader } from './signing.ts';

// The `v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">` scheme Slack and Zoom share, each with its own headers.

/** Where a v0 sender puts its signature and timestamp. */
export interface V0Headers {
  signature: string;
  timestamp: string;
  /** The sender's name, for the missing-header message. */
  sender: string;
}

/** The text a v0 sender signs before the body. */
const basestring = (timestamp: string) => `v0:${timestamp}:`;

/** Refuses the request unless its v0 signature matches a key and its timestamp is within the tolerance. */
export function checkV0Signature(
  name: string,
  request: SignedRequest,
  now: Date,
  keys: readonly KeyObject[],
  toleranceSeconds: number,
  headers: V0Headers,
): void {
  const header = signatureHeader(name, request, headers.signature, headers.sender);
  const { text, value } = signedTimestampHeader(name, request, headers.timestamp);
  const signature = header.startsWith('v0=') ? header.slice(3) : '';
  checkHmac(name, keys, [basestring(text), request.rawBody], signature, headers.signature, 'sha256', 'hex');
  checkTimestamp(name, value, now, toleranceSeconds);
}

/** The signature and timestamp headers a v0 sender would send for this body (tests and the dev CLI). */
export function signV0(
  headers: V0Headers,
  payload: string | Uint8Array,
  secret: string,
  timestamp: number,
): Record<string, string> {
  const t = String(Math.floor(timestamp));
  const signature = hmacOf('sha256', hmacKey(secret), [basestring(t), toBytes(payload)]).toString('hex');
  return { [headers.signature]: `v0=${signature}`, [headers.timestamp]: t };
}
