import { createHash, createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { InvalidPayloadError, TimestampOutOfToleranceError } from './errors.ts';
import type { VerifiedEvent } from './types.ts';

// Helpers every provider shares. They run on every request: no per-call allocation beyond what crypto needs.

/** A SHA-256 HMAC is 32 bytes, so its hex form is 64 characters and its base64 form 44 (one `=` of padding). */
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
// The 43rd character carries 4 bits of the 32nd byte and 2 padding bits that must be zero: base64 decoders ignore
// those bits, so without this check 4 different strings would decode to the same signature.
const BASE64_SHA256 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
/** Canonical unix seconds: no sign, no leading zero, no fraction, at most 15 digits (a safe integer). */
const UNIX_SECONDS = /^(?:0|[1-9][0-9]{0,14})$/;

/**
 * The fewest characters of a secret that a sender presents as it is (an API key, a Basic password): with 16
 * random characters, guesses bounded per client (the receiver's 429) never come near it.
 */
export const MIN_PRESENTED_SECRET_LENGTH = 16;

/**
 * `assertSecrets`, then a `TypeError` naming the source and the secret's position when the part of it a sender
 * presents (`presented(secret)`: the key, the password) is shorter than the minimum.
 */
export function assertPresentedSecrets(
  name: string,
  secrets: readonly string[],
  what: string,
  presented: (secret: string) => string = (secret) => secret,
): void {
  assertSecrets(name, secrets);
  secrets.forEach((secret, index) => {
    if (presented(secret).length < MIN_PRESENTED_SECRET_LENGTH) {
      throw new TypeError(
        `${name}: secret #${index + 1}'s ${what} is shorter than ${MIN_PRESENTED_SECRET_LENGTH} characters; ` +
          'a sender presents it as it is, so it must resist guessing (use a random one)',
      );
    }
  });
}

/** One HMAC key per configured secret, made once at construction (a KeyObject skips re-importing per request). */
export function hmacKey(secret: string | Uint8Array): KeyObject {
  return createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret);
}

/** HMAC-SHA256 of `prefix` (UTF-8) followed by the raw body bytes, without concatenating them. */
export function hmacSha256(key: KeyObject, prefix: string, body: Uint8Array): Buffer {
  const hmac = createHmac('sha256', key);
  if (prefix.length > 0) hmac.update(prefix, 'utf8');
  return hmac.update(body).digest();
}

/** Constant-time equality; unequal lengths are unequal (timingSafeEqual itself would throw). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A hex-encoded SHA-256 signature as bytes, or `undefined` when it is not exactly 64 hex digits. */
export function decodeHexSha256(text: string): Buffer | undefined {
  return HEX_SHA256.test(text) ? Buffer.from(text, 'hex') : undefined;
}

/**
 * A base64-encoded SHA-256 signature as bytes, or `undefined` when it is not canonical base64 of 32 bytes.
 * Buffer's own decoder skips characters it does not know; this one refuses them instead.
 */
export function decodeBase64Sha256(text: string): Buffer | undefined {
  return BASE64_SHA256.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** Unix seconds from a signed header field, or `undefined` when it is not a canonical decimal integer. */
export function parseUnixSeconds(text: string): number | undefined {
  return UNIX_SECONDS.test(text) ? Number(text) : undefined;
}

/** A header value, with absent and empty (or blank) treated alike. */
export function headerValue(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** Throws at construction, never at request time: a tolerance of 0 or NaN must not silently disable the check. */
export function assertTolerance(provider: string, toleranceSeconds: number): void {
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds <= 0) {
    throw new RangeError(
      `${provider}: toleranceSeconds must be a positive number of seconds (got ${String(toleranceSeconds)})`,
    );
  }
}

/** Secrets are required, non-empty, and never contain whitespace (a pasted trailing newline, a space after a comma). */
export function assertSecrets(provider: string, secrets: readonly string[]): void {
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new TypeError(`${provider}: at least one secret is required`);
  }
  secrets.forEach((secret, index) => {
    if (typeof secret !== 'string' || secret === '') {
      throw new TypeError(`${provider}: secret #${index + 1} is empty`);
    }
    if (/\s/.test(secret)) {
      throw new TypeError(
        `${provider}: secret #${index + 1} contains whitespace (often a trailing newline or a space after a comma)`,
      );
    }
  });
}

/**
 * Refuses a signed timestamp older or newer than the tolerance. Written so that anything not provably inside the
 * window fails, including an invalid `now` (NaN compares false).
 */
export function checkTimestamp(
  provider: string,
  timestampSeconds: number,
  now: Date,
  toleranceSeconds: number,
): void {
  const skew = Math.floor(now.getTime() / 1000) - timestampSeconds;
  if (!(Math.abs(skew) <= toleranceSeconds)) {
    const direction = skew > 0 ? `${skew}s old` : skew < 0 ? `${-skew}s in the future` : 'unreadable';
    throw new TimestampOutOfToleranceError(
      `${provider}: the signed timestamp is ${direction}, outside the tolerance of ${toleranceSeconds}s; ` +
        'is this a replayed request, or is a clock wrong?',
    );
  }
}

// Stateless for whole-buffer decodes, so one instance serves every request. `fatal` turns invalid UTF-8 into an
// error instead of U+FFFD; `ignoreBOM` keeps a byte-order mark in the text (JSON.parse then refuses it) rather
// than silently dropping bytes the signature covered.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A verified body as UTF-8 text (exactly its bytes), or `invalid_payload`. */
export function bodyText(provider: string, rawBody: Uint8Array): string {
  try {
    return utf8.decode(rawBody);
  } catch (error) {
    throw new InvalidPayloadError(`${provider}: the body is not valid UTF-8`, { cause: error });
  }
}

/** The verified body as text plus its parsed top-level object. */
export interface JsonBody {
  text: string;
  object: Record<string, unknown>;
}

/**
 * Decodes and validates an already verified body. Call only after the signature matched: an unauthenticated
 * body is never decoded or parsed. The text is returned unchanged (the parsed numbers may be rounded; the text
 * is what gets stored).
 */
export function decodeJsonBody(provider: string, rawBody: Uint8Array): JsonBody {
  if (rawBody.length === 0) {
    throw new InvalidPayloadError(`${provider}: the body is empty; expected a JSON object`);
  }
  const text = bodyText(provider, rawBody);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InvalidPayloadError(`${provider}: the body is not valid JSON`, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidPayloadError(`${provider}: the body is JSON but not an object`);
  }
  return { text, object: parsed as Record<string, unknown> };
}

/**
 * The longest event key, type or kept delivery header value an event may have, in characters. Real ones are far
 * shorter (a Stripe `evt_` id is under 40; a Shopify key joins a `*.myshopify.com` domain of at most 77, a topic
 * of at most ~60 and a UUID); anything longer is refused before the database, whose key index could not hold it.
 */
export const MAX_EVENT_FIELD_LENGTH = 255;

/**
 * Refuses (`InvalidPayloadError`) an authentic event whose key, type or a kept header value is longer than
 * `MAX_EVENT_FIELD_LENGTH`. The message names the field and its length, never the value.
 */
export function checkEventLimits(event: VerifiedEvent): VerifiedEvent {
  const tooLong = (what: string, value: string) => {
    if (value.length > MAX_EVENT_FIELD_LENGTH) {
      throw new InvalidPayloadError(
        `${event.provider}: the ${what} is ${value.length} characters long; at most ${MAX_EVENT_FIELD_LENGTH} are accepted`,
      );
    }
  };
  tooLong('event key', event.eventId);
  tooLong('event type', event.type);
  for (const [name, value] of Object.entries(event.headers)) tooLong(`${name} header`, value);
  return event;
}

/** A signing input as bytes: strings are UTF-8, exactly as a sender would put them on the wire. */
export function toBytes(payload: string | Uint8Array): Uint8Array {
  return typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
}

/** The current time in unix seconds, for signing helpers whose caller gave no timestamp. */
export function unixSeconds(date: Date = new Date()): number {
  return Math.floor(date.getTime() / 1000);
}

/** A presented credential's SHA-256, so credentials of any length compare in constant time. */
export function credentialDigest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Whether `presented` equals one of the credentials whose digests are given, comparing every one of them. */
export function matchesCredential(presented: string, digests: readonly Buffer[]): boolean {
  const digest = credentialDigest(presented);
  let matched = false;
  for (const expected of digests) matched = timingSafeEqual(digest, expected) || matched;
  return matched;
}
