import { describe, expect, it } from 'vitest';
import { CATALOGUE, catalogueEntry, type VerifiedEvent } from '@webhook-inbox/providers';
import { hasSubject, subjectOf } from '@webhook-inbox/providers/subject';
import { sampleCredentials } from '@webhook-inbox/testing';
import { catalogueDelivery, catalogueSampleType } from '../src/index.ts';
import { request } from './support.ts';

const URL_SIGNED = 'https://hooks.example.com/webhooks/x';

/** The first event of the type's sample delivery, verified by a source named after the type and by one named `name`. */
function sampleEvents(type: string, name: string): { own: VerifiedEvent; named: VerifiedEvent } {
  const entry = catalogueEntry(type)!;
  const credentials = sampleCredentials(entry);
  const delivery = catalogueDelivery(type, {
    ...credentials,
    type: catalogueSampleType(type)!,
    url: URL_SIGNED,
  })!;
  const first = (source: string | undefined): VerifiedEvent => {
    const options = { secrets: [credentials.secret], url: URL_SIGNED, verifyToken: 'verify-me' };
    const provider = entry.create({ ...options, name: source });
    const signed = request(delivery.body, delivery.headers);
    // The types with subjects verify synchronously; a batch gives its events through `receive`.
    if (!provider.receive) return provider.verify(signed, new Date());
    const reception = provider.receive(signed, new Date());
    if (reception.kind !== 'events') throw new Error(`${type}: the sample is a handshake`);
    return reception.events[0]!;
  };
  return { own: first(undefined), named: first(name) };
}

describe('subjectOf, keyed by the provider type', () => {
  it('reads GitHub subjects from an event of a source named github-acme', () => {
    const { own, named } = sampleEvents('github', 'github-acme');
    expect(named.provider).toBe('github-acme');
    expect(named.sourceType).toBe('github');
    expect(subjectOf(named).length).toBeGreaterThan(0);
    expect(subjectOf(named)).toEqual(subjectOf(own));
  });

  it('gives every type with subjects the same subject under another source name', () => {
    const types = CATALOGUE.map((entry) => entry.type).filter((type) => hasSubject(type));
    expect(types.length).toBeGreaterThan(15);
    for (const type of types) {
      const { own, named } = sampleEvents(type, `${type}-acme`);
      expect(named.provider, type).toBe(`${type}-acme`);
      expect(subjectOf(named), type).toEqual(subjectOf(own));
    }
  });

  it('leaves an event of a source named after its type unmarked', () => {
    expect(sampleEvents('github', 'github-acme').own.sourceType).toBeUndefined();
  });
});

describe('subjectOf, case', () => {
  const stripe = (object: Record<string, unknown>): VerifiedEvent => ({
    provider: 'stripe',
    eventId: 'evt_1',
    type: 'checkout.session.completed',
    payloadText: JSON.stringify({ data: { object } }),
    headers: {},
  });

  it("keeps a Stripe id's case and lower-cases the email, which Stripe compares without case", () => {
    expect(
      subjectOf(stripe({ customer: 'cus_I4TagvBaGok0Tj', customer_email: 'Ada.Lovelace@Example.com' })),
    ).toEqual(['cus_I4TagvBaGok0Tj', 'ada.lovelace@example.com']);
  });

  it('lower-cases a Shopify shop domain from its header, and keeps the bare event id as sent', () => {
    const event: VerifiedEvent = {
      provider: 'shopify',
      eventId: 'x',
      type: 'orders/create',
      payloadText: '{}',
      headers: { 'x-shopify-shop-domain': 'Acme.myshopify.com', 'x-shopify-event-id': 'AbC-123' },
    };
    expect(subjectOf(event)).toEqual(['acme.myshopify.com', 'AbC-123']);
  });
});
