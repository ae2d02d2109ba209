import { catalogueEntry, signStripe, stripeProvider, type VerifiedEvent } from '@webhook-inbox/providers';
import type { PaddlePayloads } from '@webhook-inbox/providers/paddle';
import type { SlackPayloads } from '@webhook-inbox/providers/slack';
import type { SquarePayloads } from '@webhook-inbox/providers/square';
import type { StripePayloads } from '@webhook-inbox/providers/stripe';
import { sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  catalogueDelivery,
  PADDLE_SAMPLE_BODIES,
  SLACK_SAMPLE_BODIES,
  SQUARE_SAMPLE_BODIES,
  STRIPE_SAMPLE_BODIES,
} from '../src/index.ts';
import { request, type RequiredKeys } from './support.ts';

// `webhook-inbox send <provider> <type>` posts these bodies to a team whose effects read them as the typed
// provider's payload of that type. Each module holds its bodies to those types with `satisfies` (so
// `pnpm typecheck` fails on a field the type lacks or a value of the wrong type); here, each body carries every
// top-level field its type requires, and each is verified by its provider as a delivery of its type, with its key.

/** The types among `Bodies` whose body misses a top-level field its payload requires. */
type MissingIn<Payloads, Bodies> = {
  [T in keyof Bodies]: T extends keyof Payloads
    ? [Exclude<RequiredKeys<Payloads[T]>, keyof Bodies[T]>] extends [never]
      ? never
      : T
    : T;
}[keyof Bodies];

const URL_SIGNED = 'https://hooks.example.com/webhooks/x';

/** The one event a catalogue type's provider verifies the delivery of `type` into, and the delivery's key. */
function verified(provider: string, type: string): { event: VerifiedEvent; key: string | undefined } {
  const entry = catalogueEntry(provider)!;
  const credentials = sampleCredentials(entry);
  const delivery = catalogueDelivery(provider, { ...credentials, type, url: URL_SIGNED })!;
  const verifier = entry.create({ secrets: [credentials.secret], url: URL_SIGNED });
  return { event: verifier.verify(request(delivery.body, delivery.headers), new Date()), key: delivery.key };
}

describe('typed samples', () => {
  it('carry every top-level field their type requires', () => {
    expectTypeOf<MissingIn<StripePayloads, typeof STRIPE_SAMPLE_BODIES>>().toEqualTypeOf<never>();
    expectTypeOf<MissingIn<SlackPayloads, typeof SLACK_SAMPLE_BODIES>>().toEqualTypeOf<never>();
    expectTypeOf<MissingIn<PaddlePayloads, typeof PADDLE_SAMPLE_BODIES>>().toEqualTypeOf<never>();
    expectTypeOf<MissingIn<SquarePayloads, typeof SQUARE_SAMPLE_BODIES>>().toEqualTypeOf<never>();
  });

  it.each(
    (
      [
        ['slack', SLACK_SAMPLE_BODIES, ['event_id', 'event_time']],
        ['paddle', PADDLE_SAMPLE_BODIES, ['event_id', 'occurred_at']],
        ['square', SQUARE_SAMPLE_BODIES, ['event_id', 'created_at']],
      ] as const
    ).flatMap(([provider, bodies, fresh]) =>
      Object.entries(bodies).map(([type, body]) => [provider, type, body, fresh] as const),
    ),
  )('%s %s: signed, verified and recorded as its type, with its body', (provider, type, body, fresh) => {
    const { event, key } = verified(provider, type);
    expect(event.type).toBe(type);
    expect(event.eventId).toBe(key);
    const payload = JSON.parse(event.payloadText) as Record<string, unknown>;
    // The written body, but for the fields each delivery makes fresh (its key among them).
    expect(payload).toEqual({
      ...body,
      ...Object.fromEntries(fresh.map((field) => [field, payload[field]])),
    });
    expect(payload['event_id']).toBe(key);
  });

  it.each(Object.entries(STRIPE_SAMPLE_BODIES))(
    'stripe %s: verified and recorded as its type, with its id',
    (type, body) => {
      const secret = 'whsec_typed_sample_secret';
      const payload = JSON.stringify(body);
      const event = stripeProvider({ secrets: [secret], toleranceSeconds: 300 }).verify(
        request(payload, { 'stripe-signature': signStripe({ payload, secret }) }),
        new Date(),
      );
      expect(event.type).toBe(type);
      expect(event.eventId).toBe(body.id);
      expect(body.data.object.livemode).toBe(false);
    },
  );
});
