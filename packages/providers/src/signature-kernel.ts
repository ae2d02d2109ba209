import { createHmac, type KeyObject } from 'node:crypto';
import { bytesEqual } from './shared.ts';

// The one place a presented HMAC signature is decoded and compared: the catalogue's providers (catalogue/signing.ts)
// and the `hmac` template (hmac.ts) both call it, each with its own padding rule.

export type SignatureEncoding = 'hex' | 'base64' | 'base64url';

/**
 * What a base64 signature's trailing `=` may be. `canonical`: exactly what Node's encoder writes (base64 padded to
 * a multiple of 4, base64url unpadded), the catalogue's rule, so one signature has one spelling. `optional`: any
 * trailing `=` is ignored, present or not, the template's rule (senders differ on padding).
 */
export type Padding = 'canonical' | 'optional';

const HEX = /^[0-9a-fA-F]+$/;
const TRAILING_PADDING = /=+$/;

/**
 * A signature as bytes, or `undefined` when it is not an encoding of a digest of `length` bytes under `padding`:
 * wrong length, stray characters, or base64 whose padding bits are not zero (decoders ignore them, so several
 * strings would otherwise stand for one signature).
 */
export function decodeSignature(
  text: string,
  encoding: SignatureEncoding,
  length: number,
  padding: Padding,
): Buffer | undefined {
  if (encoding === 'hex') {
    return text.length === length * 2 && HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
  }
  const bytes = Buffer.from(text, encoding);
  if (bytes.length !== length) return undefined;
  const canonical = bytes.toString(encoding);
  const same =
    padding === 'canonical'
      ? canonical === text
      : canonical.replace(TRAILING_PADDING, '') === text.replace(TRAILING_PADDING, '');
  return same ? bytes : undefined;
}

/** HMAC of the parts in order (strings as UTF-8), without concatenating them. */
export function hmacOf(algorithm: string, key: KeyObject, parts: readonly (string | Uint8Array)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Whether any key's expected signature equals any presented one, each compared in constant time; `false` when none
 * was presented.
 */
export function anyKeyMatches(
  keys: readonly KeyObject[],
  signatures: readonly Buffer[],
  expected: (key: KeyObject) => Buffer,
): boolean {
  if (signatures.length === 0) return false;
  return keys.some((key) => {
    const mac = expected(key);
    return signatures.some((signature) => bytesEqual(mac, signature));
  });
}
