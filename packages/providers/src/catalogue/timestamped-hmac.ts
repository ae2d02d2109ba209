import type { KeyObject } from 'node:crypto';
import { checkTimestamp, decodeJsonBody, hmacKey, toBytes, unixSeconds } from '../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../types.ts';
import { hmacOf } from '../signature-kernel.ts';
import {
  partsMatch,
  noMatch,
  parseTimestampedHeader,
  secretKeys,
  signatureHeader,
  sourceName,
  tolerance,
  type CatalogueProviderOptions,
  type TimestampedHeader,
} from './signing.ts';

// The `<t>=<unix>,<v>=<hex HMAC-SHA256 of "<t><joiner><raw body>">` scheme Calendly and Paddle share: one header
// carrying the timestamp and any number of signatures, the HMAC taken over the timestamp, a joiner and the body.

/** A {@link TimestampedHeader} with what the HMAC covers and who sends it. */
export interface TimestampedHmac extends TimestampedHeader {
  /** Between the timestamp and the body in the signed text: `.` (Calendly) or `:` (Paddle). */
  joiner: string;
  /** The sender's name, for the missing-header message. */
  sender: string;
}

/** A provider whose scheme is a {@link TimestampedHmac} header and whose event is identified by its JSON body. */
export interface TimestampedHmacProvider extends TimestampedHmac {
  /** The provider's type, and the default source name. */
  type: string;
  /** The tolerance when the options give none. */
  toleranceSeconds: number;
  /** The event key and type of an authentic delivery; throws `InvalidPayloadError` when one is missing. */
  identify(name: string, body: Record<string, unknown>): { eventId: string; type: string };
}

/** The provider for such a scheme: signature and timestamp first, then the body is decoded and identified. */
export function timestampedHmacProvider(
  scheme: TimestampedHmacProvider,
  options: CatalogueProviderOptions,
): Provider {
  const name = sourceName(scheme.type, options.name);
  const keys = secretKeys(name, options.secrets);
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, scheme.toleranceSeconds);

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      checkTimestampedHmac(name, request, now, keys, toleranceSeconds, scheme);
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const { eventId, type } = scheme.identify(name, object);
      return { provider: name, eventId, type, payloadText: text, headers: {}, body: object };
    },
  };
}

/**
 * Checks the request's signature header against the keys and its timestamp against the tolerance; throws
 * `missing_signature` or `invalid_signature` (bad header, no match, timestamp out of tolerance).
 */
function checkTimestampedHmac(
  name: string,
  request: SignedRequest,
  now: Date,
  keys: readonly KeyObject[],
  toleranceSeconds: number,
  scheme: TimestampedHmac,
): void {
  const header = signatureHeader(name, request, scheme.header.toLowerCase(), scheme.sender);
  const { timestamp, signatures } = parseTimestampedHeader(name, header, scheme);
  if (!partsMatch('sha256', keys, [`${timestamp}${scheme.joiner}`, request.rawBody], signatures)) {
    throw noMatch(name, `no ${scheme.signatureField} signature`);
  }
  checkTimestamp(name, timestamp, now, toleranceSeconds);
}

export interface SignTimestampedOptions {
  /** The exact body that will be sent. */
  payload: string | Uint8Array;
  /** The signing secret. */
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/** The signature header value the sender would send for this body, for tests and the dev CLI. */
export function signTimestampedHmac(
  scheme: TimestampedHmac,
  { payload, secret, timestamp = unixSeconds() }: SignTimestampedOptions,
): string {
  const t = Math.floor(timestamp);
  const signature = hmacOf('sha256', hmacKey(secret), [`${t}${scheme.joiner}`, toBytes(payload)]).toString(
    'hex',
  );
  return `${scheme.timestampField}=${t}${scheme.separator}${scheme.signatureField}=${signature}`;
}
