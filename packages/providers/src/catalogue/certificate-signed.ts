import { InvalidSignatureError } from '../errors.ts';
import type { Provider, Reception, SignedRequest } from '../types.ts';
import type { CertificateFetch } from './certificates.ts';
// What AWS SNS and PayPal share: their signature is an RSA one by a certificate fetched from a URL in the message,
// so they verify asynchronously (`receiveAsync`), and the signature is base64 of an RSA block.

/** The options a certificate-based provider takes besides the common ones. */
export interface CertificateSourceOptions {
  /** How the certificate is fetched once its URL passed the host allow-list; unset: the global fetch. */
  certificateFetch?: CertificateFetch;
}

/** The provider of a certificate-based source: the receiver awaits `receiveAsync`; `verify` cannot answer. */
export function certificateSignedProvider(
  name: string,
  receiveAsync: (request: SignedRequest, now: Date) => Promise<Reception>,
): Provider {
  return {
    name,
    receiveAsync,
    verify() {
      throw new TypeError(
        `${name} verifies with a certificate fetched from the URL in the message: call receiveAsync`,
      );
    },
  };
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * An RSA signature's bytes from its base64 text, or `invalid_signature` when it is not canonical base64 (several
 * strings would otherwise stand for one signature).
 */
export function rsaSignature(name: string, text: string, where: string): Buffer {
  const bytes = BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (bytes === undefined || bytes.length === 0 || bytes.toString('base64') !== text) {
    throw new InvalidSignatureError(`${name}: ${where} is not base64`);
  }
  return bytes;
}

/** Unix seconds of an ISO 8601 time the sender signed, or `invalid_signature`. */
export function signedIsoTime(name: string, text: string, where: string): number {
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new InvalidSignatureError(`${name}: ${where} is not an ISO 8601 time`);
  return Math.floor(ms / 1000);
}
