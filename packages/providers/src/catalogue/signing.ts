import { createHash, type KeyObject } from 'node:crypto';
import { InvalidPayloadError, InvalidSignatureError, MissingSignatureError } from '../errors.ts';
import {
  assertSecrets,
  assertTolerance,
  bytesEqual,
  checkTimestamp,
  headerValue,
  hmacKey,
  parseUnixSeconds,
} from '../shared.ts';
import {
  anyKeyMatches,
  decodeSignature,
  hmacOf,
  type SignatureEncoding as KernelEncoding,
} from '../signature-kernel.ts';
import { PROVIDER_NAME } from '../standard-webhooks.ts';
import type { SignedRequest, VerifiedEvent } from '../types.ts';

// What the catalogue's providers share beyond ../shared.ts and ../signature-kernel.ts: digests other than
// SHA-256, signatures in either encoding, and the option checks every factory makes. Construction-time checks
// throw TypeError/RangeError; request-time ones throw the typed WebhookErrors.

export type Digest = 'sha1' | 'sha256';
export type SignatureEncoding = Exclude<KernelEncoding, 'base64url'>;

const DIGEST_BYTES: Record<Digest, number> = { sha1: 20, sha256: 32 };

/** The options every catalogue factory takes. */
export interface CatalogueProviderOptions {
  /** The source's name, also its URL segment (`/webhooks/<name>`); defaults to the provider's type. */
  name?: string;
  /** The provider's signing secrets (or tokens); more than one during a rotation. Any may match. */
  secrets: readonly string[];
  /** Maximum age (and future skew) of a signed timestamp, in seconds; each provider has its own default. */
  toleranceSeconds?: number;
}

/** The checked name of a source of type `type`. */
export function sourceName(type: string, name: string | undefined): string {
  const chosen = name ?? type;
  if (typeof chosen !== 'string' || !PROVIDER_NAME.test(chosen)) {
    throw new TypeError(
      `${type}: source name ${JSON.stringify(chosen)} must be lower-case letters, digits or "-"`,
    );
  }
  return chosen;
}

/** One HMAC key per secret, checked once at construction. */
export function secretKeys(name: string, secrets: readonly string[]): readonly KeyObject[] {
  assertSecrets(name, secrets);
  return secrets.map((secret) => hmacKey(secret));
}

/** What an HMAC source checks at construction: its name, one key per secret, its tolerance (the documented one unless asked). */
export function hmacSource(
  type: string,
  options: CatalogueProviderOptions,
  documentedTolerance: number,
): { name: string; keys: readonly KeyObject[]; toleranceSeconds: number } {
  const name = sourceName(type, options.name);
  const keys = secretKeys(name, options.secrets);
  return { name, keys, toleranceSeconds: tolerance(name, options.toleranceSeconds, documentedTolerance) };
}

/** The tolerance asked for, else the provider's documented one; never 0 or NaN. */
export function tolerance(name: string, asked: number | undefined, providerDefault: number): number {
  const seconds = asked ?? providerDefault;
  assertTolerance(name, seconds);
  return seconds;
}

/**
 * A signature as the bytes of a digest of this kind, or `undefined`: the kernel's decoding with the canonical
 * padding rule (one spelling per signature).
 */
export function decodeDigest(text: string, digest: Digest, encoding: SignatureEncoding): Buffer | undefined {
  return decodeSignature(text, encoding, DIGEST_BYTES[digest], 'canonical');
}

/** Whether any key's HMAC of the parts equals any of the signatures, each compared in constant time. */
export function partsMatch(
  digest: Digest,
  keys: readonly KeyObject[],
  parts: readonly (string | Uint8Array)[],
  signatures: readonly Buffer[],
): boolean {
  return anyKeyMatches(keys, signatures, (key) => hmacOf(digest, key, parts));
}

/**
 * Checks one encoded signature against every key's HMAC of the parts; `invalid_signature` (saying `what` did not
 * match) when it is not a canonical encoding or matches no key.
 */
export function checkHmac(
  name: string,
  keys: readonly KeyObject[],
  parts: readonly (string | Uint8Array)[],
  signatureText: string,
  what: string,
  digest: Digest = 'sha256',
  encoding: SignatureEncoding = 'base64',
): void {
  const signature = decodeDigest(signatureText, digest, encoding);
  if (!partsMatch(digest, keys, parts, signature ? [signature] : [])) throw noMatch(name, what);
}

/** The signature header's value, or `missing_signature` naming it. */
export function signatureHeader(
  name: string,
  request: SignedRequest,
  header: string,
  sender: string,
): string {
  const value = headerValue(request.header(header));
  if (value === undefined) {
    throw new MissingSignatureError(
      `${name}: the ${header} header is absent; is this request really from ${sender}?`,
    );
  }
  return value;
}

/** The refusal when nothing matched, with the two mistakes that cause it nearly every time. */
export function noMatch(name: string, what: string): InvalidSignatureError {
  return new InvalidSignatureError(
    `${name}: ${what} matched no configured secret; are you verifying the raw request body ` +
      `(not re-serialized JSON)? is the secret configured for "${name}" this webhook's signing secret?`,
  );
}

/** What Discord and SendGrid sign with their private key: the timestamp header's text followed by the raw body. */
export function timestampThenBody(timestamp: string, rawBody: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]);
}

/** The options of a signer for a provider that signs with a private key (tests and the dev CLI). */
export interface KeyPairSignOptions {
  payload: string | Uint8Array;
  privateKey: KeyObject;
  /** Unix seconds. */
  timestamp: number;
}

/** The event of a JSON body keyed and typed by two of its string fields; `invalid_payload` when either is absent. */
export function bodyKeyedEvent(
  name: string,
  body: { text: string; object: Record<string, unknown> },
  idField: string,
  typeField: string,
): VerifiedEvent {
  return {
    provider: name,
    eventId: bodyString(name, body.object, idField),
    type: bodyString(name, body.object, typeField),
    payloadText: body.text,
    headers: {},
    body: body.object,
  };
}

/** A header the event key or type is read from; `invalid_payload` when absent (the request was authentic). */
export function requiredHeader(name: string, request: SignedRequest, header: string, why: string): string {
  const value = headerValue(request.header(header));
  if (value === undefined) throw new InvalidPayloadError(`${name}: the ${header} header is absent; ${why}`);
  return value;
}

/** A non-empty string field of the verified body (numbers, as some providers send ids, become their text). */
export function bodyString(name: string, object: Record<string, unknown>, field: string): string {
  const value = object[field];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new InvalidPayloadError(
    `${name}: the body has no "${field}"; is this a webhook from the expected sender?`,
  );
}

/** `type.action` when the body has a string `action`, else the type alone (GitHub, Sentry, GitLab, Linear). */
export function withAction(type: string, action: unknown): string {
  return typeof action === 'string' && action !== '' ? `${type}.${action}` : type;
}

/** The object at `object[field]`, or `invalid_payload`. */
export function bodyObject(
  name: string,
  object: Record<string, unknown>,
  field: string,
): Record<string, unknown> {
  const value = object[field];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidPayloadError(`${name}: the body has no "${field}" object`);
  }
  return value as Record<string, unknown>;
}

/** Kept delivery headers, those present only, under lower-case names. */
export function keptHeaders(request: SignedRequest, names: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const header of names) {
    const value = headerValue(request.header(header));
    if (value !== undefined) kept[header] = value;
  }
  return kept;
}

/** A signature that is `prefix` + the encoded HMAC of the raw body alone, in one header. */
export interface BodySignature {
  header: string;
  /** Text before the encoded HMAC, such as `sha256=`; `''` for none. */
  prefix: string;
  digest: Digest;
  encoding: SignatureEncoding;
  /** The sender's name, for the missing-header message. */
  sender: string;
}

/** Refuses the request unless `spec.header` holds the HMAC of its raw body under one of the keys. */
export function checkBodySignature(
  name: string,
  request: SignedRequest,
  keys: readonly KeyObject[],
  spec: BodySignature,
): void {
  const value = signatureHeader(name, request, spec.header, spec.sender);
  if (!value.startsWith(spec.prefix)) {
    throw new InvalidSignatureError(
      `${name}: the ${spec.header} header does not start with "${spec.prefix}"`,
    );
  }
  const signature = value.slice(spec.prefix.length);
  checkHmac(
    name,
    keys,
    [request.rawBody],
    signature,
    `the ${spec.header} signature`,
    spec.digest,
    spec.encoding,
  );
}

/** The header value `checkBodySignature` accepts for this body and secret. */
export function signBody(spec: BodySignature, secret: string, payload: string | Uint8Array): string {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return spec.prefix + hmacOf(spec.digest, hmacKey(secret), [body]).toString(spec.encoding);
}

/**
 * Whether a shared token (GitLab's `X-Gitlab-Token`, a Basic Auth password) equals any configured one. Both sides
 * are hashed first, so the comparison is constant-time whatever their lengths.
 */
export function tokenMatches(token: string, secrets: readonly string[]): boolean {
  const presented = createHash('sha256').update(token, 'utf8').digest();
  return secrets.some((secret) =>
    bytesEqual(presented, createHash('sha256').update(secret, 'utf8').digest()),
  );
}

/** The checked public URL a provider signs (Square, HubSpot). */
export function publicUrl(name: string, url: unknown): string {
  if (typeof url !== 'string' || !URL.canParse(url) || !/^https?:\/\//.test(url)) {
    throw new TypeError(
      `${name}: url must be the absolute public URL the provider sends to (got ${String(url)})`,
    );
  }
  return url;
}

/** How a `t=...,v1=...` style header is laid out (Stripe, Paddle, Calendly). */
export interface TimestampedHeader {
  /** The header's name, for messages. */
  header: string;
  /** Between items: `,` (Calendly) or `;` (Paddle). */
  separator: string;
  /** The timestamp's field (`t`, `ts`). */
  timestampField: string;
  /** The signatures' field (`v1`, `h1`); several may be present and any may match. */
  signatureField: string;
}

/**
 * The signed unix timestamp and the decoded hex SHA-256 signatures of such a header. Malformed signatures are
 * dropped (they could never match); a header with no usable timestamp or no signature is `invalid_signature`.
 */
export function parseTimestampedHeader(
  name: string,
  value: string,
  layout: TimestampedHeader,
): { timestamp: number; signatures: Buffer[] } {
  let timestampText: string | undefined;
  const signatures: Buffer[] = [];
  for (const item of value.split(layout.separator)) {
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const field = item.slice(0, eq).trim();
    const text = item.slice(eq + 1).trim();
    if (field === layout.timestampField) {
      if (timestampText !== undefined) {
        throw new InvalidSignatureError(
          `${name}: ${layout.header} has more than one ${layout.timestampField}=`,
        );
      }
      timestampText = text;
    } else if (field === layout.signatureField) {
      const signature = decodeDigest(text, 'sha256', 'hex');
      if (signature !== undefined) signatures.push(signature);
    }
  }
  const timestamp = timestampText === undefined ? undefined : parseUnixSeconds(timestampText);
  if (timestamp === undefined) {
    throw new InvalidSignatureError(
      `${name}: ${layout.header} has no ${layout.timestampField}=<unix seconds>`,
    );
  }
  if (signatures.length === 0) {
    throw new InvalidSignatureError(
      `${name}: ${layout.header} has no ${layout.signatureField}=<64 hex digits>`,
    );
  }
  return { timestamp, signatures };
}

/**
 * A signed timestamp header as sent (the signature covers this text) and as a number: unix seconds, or unix
 * milliseconds for HubSpot. Absent or not a canonical integer: `invalid_signature`.
 */
export function signedTimestampHeader(
  name: string,
  request: SignedRequest,
  header: string,
): { text: string; value: number } {
  const text = headerValue(request.header(header));
  const value = text === undefined ? undefined : parseUnixSeconds(text);
  if (text === undefined || value === undefined) {
    throw new InvalidSignatureError(`${name}: the ${header} header is absent or not a unix time`);
  }
  return { text, value };
}

/** Where a sender that signs `timestamp + body` with a private key puts its signature, and how it is checked. */
export interface KeyPairScheme {
  signatureHeader: string;
  timestampHeader: string;
  sender: string;
  /** Whether the signature is one of the timestamp's text followed by the raw body under any configured key. */
  verify(timestamp: string, rawBody: Uint8Array, signature: string): boolean;
  /** The refusal's message when it is not: which key the operator should have configured. */
  mismatch: string;
}

/**
 * Checks a Discord/SendGrid-style request: the signature header (else `missing_signature`), the timestamp header,
 * the signature (else `invalid_signature`), then the timestamp against the tolerance.
 */
export function checkKeyPairSignature(
  name: string,
  request: SignedRequest,
  now: Date,
  toleranceSeconds: number,
  scheme: KeyPairScheme,
): void {
  const signature = signatureHeader(name, request, scheme.signatureHeader, scheme.sender);
  const { text, value } = signedTimestampHeader(name, request, scheme.timestampHeader);
  if (!scheme.verify(text, request.rawBody, signature)) {
    throw new InvalidSignatureError(`${name}: ${scheme.mismatch}`);
  }
  checkTimestamp(name, value, now, toleranceSeconds);
}
