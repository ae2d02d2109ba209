/** The cases every body-HMAC provider's test file owes, registered from one table row per provider. */
import { createHmac } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Digest, SignatureEncoding } from '../../src/catalogue/signing.ts';
import type { Provider, VerifiedEvent } from '../../src/types.ts';
import { expectForgeriesRefused, refusal, request, verifiedEvent, without } from './support.ts';

/** The moment every body-HMAC case verifies at: these providers sign no timestamp. */
const NOW = new Date('2026-12-05T00:00:00Z');

export interface BodyHmacCase {
  provider: Provider;
  /** The provider's exported signer (tests and the dev CLI). */
  sign(options: { payload: string; secret: string }): string;
  /**
   * What the signer is checked against: the provider's documented recipe (who documents it, the HMAC's digest and
   * encoding, the text before it), or the test vector it publishes.
   */
  reference:
    | { by: string; digest: Digest; encoding: SignatureEncoding; prefix?: string }
    | { vector: { payload: string; secret: string; signature: string } };
  secret: string;
  body: string;
  /** The header holding the signature (lower-case). */
  signatureHeader: string;
  /** Every header of a delivery whose signature header holds `signature`. */
  headers(signature: string): Record<string, string>;
  /** The key, type and kept headers of the event the signed `body` verifies to. */
  event: Pick<VerifiedEvent, 'eventId' | 'type' | 'headers'>;
  /** An authentic delivery without its event key: the signed body without this header, or this signed body. */
  keyless: { header: string } | { body: string };
}

/** Registers the reference, accept, forgery and missing-event-key tests for one provider. */
export function itVerifiesBodyHmac(c: BodyHmacCase): void {
  const sign = (payload: string, secret: string): string => c.sign({ payload, secret });
  const reference = c.reference;
  if ('vector' in reference) {
    it('signs its documented test vector', () => {
      expect(sign(reference.vector.payload, reference.vector.secret)).toBe(reference.vector.signature);
    });
  } else {
    const { by, digest, encoding, prefix = '' } = reference;
    const recipe = `${prefix ? `${prefix} and ` : ''}the ${encoding} HMAC-${digest.toUpperCase()} of the body`;
    it(`signs as ${by} documents it: ${recipe}`, () => {
      const expected = prefix + createHmac(digest, c.secret).update(c.body).digest(encoding);
      expect(sign(c.body, c.secret)).toBe(expected);
    });
  }

  it('accepts a signed delivery and identifies the event', () => {
    const event = c.provider.verify(request(c.body, c.headers(sign(c.body, c.secret))), NOW);
    expect(event).toEqual(verifiedEvent(c.provider.name, c.body, c.event));
  });

  it('refuses a tampered body, a wrong secret, a missing or malformed signature', () => {
    expectForgeriesRefused({ ...c, sign, now: NOW });
  });

  it('refuses an authentic delivery without its event key', () => {
    const body = 'body' in c.keyless ? c.keyless.body : c.body;
    const signed = c.headers(sign(body, c.secret));
    const headers = 'header' in c.keyless ? without(signed, c.keyless.header) : signed;
    expect(refusal(c.provider, body, headers, NOW)).toBe('invalid_payload');
  });
}
