/** The cases every body-HMAC provider's test file owes, registered from one table row per provider. */
import { expect, it } from 'vitest';
import type { VerifiedEvent } from '../../../src/providers/types.ts';
import { expectForgeriesRefused, refusal, request, without, type SignedCase } from './support.ts';

export interface BodyHmacCase extends SignedCase {
  /** The key, type and kept headers of the event the signed `body` verifies to. */
  event: Pick<VerifiedEvent, 'eventId' | 'type' | 'headers'>;
  /** An authentic delivery without its event key: the signed body without this header, or this signed body. */
  keyless: { header: string } | { body: string };
}

/** Registers the accept, forgery and missing-event-key tests for one provider. */
export function itVerifiesBodyHmac(c: BodyHmacCase): void {
  it('accepts a signed delivery and identifies the event', () => {
    const event = c.provider.verify(request(c.body, c.headers(c.sign(c.body, c.secret))), c.now);
    expect(event).toEqual({ provider: c.provider.name, payloadText: c.body, ...c.event });
  });

  it('refuses a tampered body, a wrong secret, a missing or malformed signature', () => {
    expectForgeriesRefused(c);
  });

  it('refuses an authentic delivery without its event key', () => {
    const body = 'body' in c.keyless ? c.keyless.body : c.body;
    const signed = c.headers(c.sign(body, c.secret));
    const headers = 'header' in c.keyless ? without(signed, c.keyless.header) : signed;
    expect(refusal(c.provider, body, headers, c.now)).toBe('invalid_payload');
  });
}
