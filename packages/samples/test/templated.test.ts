import { CATALOGUE } from '@webhook-inbox/providers';
import { sampleCredentials } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { templatedBuilder } from '../src/templated.ts';
import { request } from './support.ts';

// A templated provider's sample built from its declaration alone (templated.ts), checked against every templated
// provider of the catalogue, also those whose sample is written by hand: their keys come from headers, pointers or
// several headers joined, their types from a header and a suffix or a pointer.

const TEMPLATED = CATALOGUE.flatMap((entry) =>
  entry.template ? [{ ...entry, template: entry.template }] : [],
);
const NOW = new Date();

describe('samples built from a template', () => {
  it.each(TEMPLATED.map((entry) => [entry.type, entry] as const))(
    '%s: signed as its provider verifies, with the key and type the receiver records',
    (type, entry) => {
      const { secret } = sampleCredentials(entry);
      const builder = templatedBuilder(entry);
      const delivery = builder.build({ secret, type: builder.type, now: NOW });
      const event = entry.create({ secrets: [secret] }).verify(request(delivery.body, delivery.headers), NOW);
      expect({ key: event.eventId, type: event.type }).toEqual({ key: delivery.key, type: delivery.type });
      expect(delivery.key, type).toBeTruthy();
      // Another delivery is another event.
      expect(builder.build({ secret, type: builder.type, now: NOW }).key).not.toBe(delivery.key);
      // The wrong secret is refused.
      expect(() =>
        entry.create({ secrets: [`${secret}x`] }).verify(request(delivery.body, delivery.headers), NOW),
      ).toThrow();
    },
  );

  it("sends a caller's payload as given, its key the provider's to read", () => {
    const vercel = TEMPLATED.find((entry) => entry.type === 'vercel')!;
    const { secret } = sampleCredentials(vercel);
    const builder = templatedBuilder(vercel);
    const given = builder.build({
      secret,
      type: 'deployment.created',
      now: NOW,
      payload: '{"id":"evt_1","type":"x"}',
    });
    expect(given).toMatchObject({ body: '{"id":"evt_1","type":"x"}', key: 'evt_1', type: 'x' });
    const keyless = builder.build({ secret, type: 'deployment.created', now: NOW, payload: '{"type":"x"}' });
    expect(keyless.key).toBeUndefined();
  });
});
