/** Shared by the catalogue's provider tests: requests as the receiver hands them over, and refusal codes. */
import type { KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'svix';
import { expect, it } from 'vitest';
import { WebhookError, type WebhookErrorCode } from '../../src/errors.ts';
import type { KeyPairSignOptions } from '../../src/catalogue/signing.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../src/types.ts';

/** A request with these exact body bytes and headers (looked up case-insensitively, as the receiver does). */
export function request(body: string | Uint8Array, headers: Record<string, string>): SignedRequest {
  const h = new Headers(headers);
  return {
    rawBody: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
    header: (name) => h.get(name),
  };
}

/**
 * The event a provider should verify `payloadText` into: the body it parsed passed on (`VerifiedEvent.body`), no kept
 * headers unless `fields` has them.
 */
export function verifiedEvent(
  provider: string,
  payloadText: string,
  fields: Pick<VerifiedEvent, 'eventId' | 'type'> & Partial<Pick<VerifiedEvent, 'headers'>>,
): VerifiedEvent {
  return {
    provider,
    payloadText,
    headers: {},
    body: JSON.parse(payloadText) as Record<string, unknown>,
    ...fields,
  };
}

/** The code a verification fails with, or `'no error'`; anything but a WebhookError is rethrown. */
export function codeOf(fn: () => unknown): WebhookErrorCode | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (error) {
    if (error instanceof WebhookError) return error.code;
    throw error;
  }
}

/** The refusal code of these headers and body at `now`, asked as the receiver asks (`receive` where there is one). */
export function refusal(
  provider: Provider,
  body: string,
  headers: Record<string, string>,
  now: Date,
): WebhookErrorCode | 'no error' {
  const delivery = request(body, headers);
  return codeOf(() => (provider.receive ? provider.receive(delivery, now) : provider.verify(delivery, now)));
}

/** The headers without `name` (any case). */
export function without(headers: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([key]) => key.toLowerCase() !== name.toLowerCase()),
  );
}

/** The body with one character changed inside it, still valid JSON when the change lands in a string. */
export function tamper(body: string): string {
  const index = body.lastIndexOf('"') - 1;
  const swapped = body[index] === 'x' ? 'y' : 'x';
  return body.slice(0, index) + swapped + body.slice(index + 1);
}

/** A provider under test, how it signs, and the headers a signed delivery carries. */
export interface SignedCase {
  provider: Provider;
  secret: string;
  /** A well-formed secret other than `secret`; defaults to `secret` with a suffix. */
  wrongSecret?: string;
  body: string;
  /** The header holding the signature (or token). */
  signatureHeader: string;
  sign(payload: string, secret: string): string;
  /** Every header of a delivery whose signature header holds `signature`. */
  headers(signature: string): Record<string, string>;
  now: Date;
}

/** The refusals every signed provider owes: tampered body, wrong secret, missing and malformed signature. */
export function expectForgeriesRefused(c: SignedCase): void {
  const good = c.headers(c.sign(c.body, c.secret));
  expect(refusal(c.provider, c.body, good, c.now)).toBe('no error');
  expect(refusal(c.provider, tamper(c.body), good, c.now)).toBe('invalid_signature');
  expect(
    refusal(c.provider, c.body, c.headers(c.sign(c.body, c.wrongSecret ?? `${c.secret}-other`)), c.now),
  ).toBe('invalid_signature');
  expect(refusal(c.provider, c.body, without(good, c.signatureHeader), c.now)).toBe('missing_signature');
  expect(refusal(c.provider, c.body, c.headers('not-a-signature'), c.now)).toBe('invalid_signature');
}

/** A provider that signs the timestamp header's text followed by the raw body with a private key (Discord, SendGrid). */
export interface KeyPairCase {
  provider: Provider;
  sign(options: KeyPairSignOptions): string;
  /** The private half of the configured public key. */
  privateKey: KeyObject;
  /** A private key whose public half is not configured. */
  otherPrivateKey: KeyObject;
  body: string;
  /** Lower-case header names. */
  signatureHeader: string;
  timestampHeader: string;
  /** A value of the signature's encoding that no key made. */
  unsigned: string;
  now: Date;
}

/** The refusals a key-pair provider owes: tampered body, other key, moved timestamp, missing, unsigned, stale. */
export function expectKeyPairForgeriesRefused(c: KeyPairCase): void {
  const t = Math.floor(c.now.getTime() / 1000);
  const headers = (signature: string, timestamp = t) => ({
    [c.signatureHeader]: signature,
    [c.timestampHeader]: String(timestamp),
  });
  const good = headers(c.sign({ payload: c.body, privateKey: c.privateKey, timestamp: t }));
  const otherKey = headers(c.sign({ payload: c.body, privateKey: c.otherPrivateKey, timestamp: t }));
  const moved = { ...good, [c.timestampHeader]: String(t + 1) };
  expect(refusal(c.provider, tamper(c.body), good, c.now)).toBe('invalid_signature');
  expect(refusal(c.provider, c.body, otherKey, c.now)).toBe('invalid_signature');
  expect(refusal(c.provider, c.body, moved, c.now)).toBe('invalid_signature');
  expect(refusal(c.provider, c.body, without(good, c.signatureHeader), c.now)).toBe('missing_signature');
  expect(refusal(c.provider, c.body, headers(c.unsigned), c.now)).toBe('invalid_signature');
  expect(refusal(c.provider, c.body, good, new Date(c.now.getTime() + 301_000))).toBe(
    'timestamp_out_of_tolerance',
  );
}

/** A Svix-signed provider's signer (Clerk, Resend): the three `svix-*` headers of a delivery. */
export type SvixSigner = (options: {
  id: string;
  payload: string;
  secret: string;
  timestamp: number;
}) => Record<'svix-id' | 'svix-timestamp' | 'svix-signature', string>;

/** A Svix-signed provider (Clerk, Resend), one delivery, and its sender's SDK. */
export interface SvixCase {
  provider: Provider;
  sign: SvixSigner;
  delivery: { id: string; body: string; secret: string };
  /** The event type the delivery verifies to. */
  type: string;
  /** The sender's SDK check, named in the test's title. */
  sdk: string;
  /** What the sender's SDK reads from the delivery with these headers; it throws when it refuses them. */
  sdkVerify(
    headers: ReturnType<SvixSigner>,
    body: string,
    secret: string,
  ): { type: string } | Promise<{ type: string }>;
}

/**
 * Registers a Svix-signed provider's tests: it accepts what Svix's own library signs, the sender's SDK accepts what
 * its signer signs, and it refuses {@link expectForgeriesRefused}'s forgeries and a timestamp 301 s stale.
 */
export function itVerifiesSvixSigned(c: SvixCase): void {
  const { id, body, secret } = c.delivery;

  it(`accepts what Svix's library signs, and ${c.sdk} accepts what ${c.sign.name} signs`, async () => {
    // The SDKs check the timestamp against the real clock, so this message is signed now.
    const now = new Date();
    const timestamp = Math.floor(now.getTime() / 1000);
    const svixSigned = {
      'svix-id': id,
      'svix-timestamp': String(timestamp),
      'svix-signature': new Webhook(secret).sign(id, now, body),
    };
    expect(c.provider.verify(request(body, svixSigned), now)).toMatchObject({
      provider: c.provider.name,
      eventId: id,
      type: c.type,
      payloadText: body,
    });
    const ours = c.sign({ id, payload: body, secret, timestamp });
    expect((await c.sdkVerify(ours, body, secret)).type).toBe(c.type);
  });

  it('refuses a tampered body, a wrong secret, a missing signature, a stale timestamp', () => {
    const now = new Date('2026-12-05T00:00:00Z');
    const timestamp = Math.floor(now.getTime() / 1000);
    expectForgeriesRefused({
      provider: c.provider,
      secret,
      body,
      signatureHeader: 'svix-signature',
      wrongSecret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
      sign: (payload, key) => c.sign({ id, payload, secret: key, timestamp })['svix-signature'],
      headers: (signature) => ({
        'svix-id': id,
        'svix-timestamp': String(timestamp),
        'svix-signature': signature,
      }),
      now,
    });
    const headers = c.sign({ id, payload: body, secret, timestamp });
    expect(refusal(c.provider, body, headers, new Date(now.getTime() + 301_000))).toBe(
      'timestamp_out_of_tolerance',
    );
  });
}

/** Property: any body, correctly signed by `signed`, verifies with its bytes unchanged or is `invalid_payload`. */
export function expectSignedBodiesVerifyOrInvalidPayload(
  provider: Provider,
  signed: (body: Uint8Array) => SignedRequest,
  now: Date,
): void {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 128 }),
        fc.json().map((j) => Buffer.from(j)),
      ),
      (body) => {
        const req = signed(body);
        let result;
        try {
          result = provider.verify(req, now);
        } catch (error) {
          expect(error).toBeInstanceOf(WebhookError);
          expect((error as WebhookError).code).toBe('invalid_payload');
          return;
        }
        expect(Buffer.from(result.payloadText)).toEqual(Buffer.from(body));
      },
    ),
    { numRuns: 300 },
  );
}
