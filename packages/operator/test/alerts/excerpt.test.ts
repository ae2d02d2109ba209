import { describe, expect, it } from 'vitest';
import { cpuTime } from '@webhook-inbox/testing';
import { PERSONAL, shopifyOrderWithPersonalData, stripeCheckoutWithPersonalData } from '../alert-support.ts';
import { alertExcerpt } from '../../src/alerts/excerpt.ts';

function expectNoPersonalData(excerpt: string | undefined): void {
  for (const value of PERSONAL) expect(excerpt, value).not.toContain(value);
}

describe('alertExcerpt', () => {
  it('a Stripe checkout: ids, amounts and status; nothing from custom fields, customer details or metadata', () => {
    const event = stripeCheckoutWithPersonalData();
    const session = event.data.object;
    const excerpt = alertExcerpt(
      { provider: 'stripe', type: 'checkout.session.completed', payload: event },
      4000,
    );
    expect(JSON.parse(excerpt ?? '')).toEqual({
      id: event.id,
      object: 'event',
      api_version: '2020-03-02',
      created: 1619697430,
      livemode: true,
      pending_webhooks: 1,
      request: { id: null },
      type: 'checkout.session.completed',
      data: {
        object: {
          id: session.id,
          object: 'checkout.session',
          created: session.created,
          livemode: true,
          status: 'complete',
          currency: 'eur',
          customer: session.customer,
          mode: 'payment',
          payment_status: 'paid',
          amount_subtotal: 999,
          amount_total: 999,
          subscription: null,
          invoice: session.invoice,
          payment_intent: session.payment_intent,
          expires_at: session.expires_at,
        },
      },
    });
    expectNoPersonalData(excerpt);
  });

  it('a Shopify order: order, customer and line item ids, totals; no address, name, email or note', () => {
    const order = shopifyOrderWithPersonalData();
    const excerpt = alertExcerpt({ provider: 'shopify', type: 'orders/create', payload: order }, 4000) ?? '';
    expect(excerpt).toContain('"id":"820982911946154508"'); // beyond 2^53, exact
    expect(excerpt).toContain('"customer":{"id":"115310627314723954"}');
    expect(excerpt).toContain('"total_price":"1575.90"');
    expect(excerpt).toContain('"line_items":[{"id":"866550311766439020"');
    expect(excerpt).not.toContain('Snowboard'); // line item titles are not on the list
    expectNoPersonalData(excerpt);
  });

  it('Shopify compliance topics: shop and customer ids, never the customer details', () => {
    const payload = {
      shop_id: 954889,
      shop_domain: 'acme.myshopify.com',
      customer: { id: 191167, email: 'john@example.com', phone: '555-625-1199' },
      orders_requested: [299938, 280263],
      data_request: { id: 9999 },
    };
    const excerpt = alertExcerpt({ provider: 'shopify', type: 'customers/data_request', payload });
    expect(JSON.parse(excerpt ?? '')).toEqual({
      shop_id: 954889,
      shop_domain: 'acme.myshopify.com',
      customer: { id: 191167 },
      orders_requested: [299938, 280263],
      data_request: { id: 9999 },
    });
  });

  it('a type with no list of its own shows ids and timestamps only', () => {
    const customer = { id: 42, created_at: '2026-01-01', first_name: 'Ada', addresses: [{ city: 'London' }] };
    expect(alertExcerpt({ provider: 'shopify', type: 'customers/create', payload: customer })).toBe(
      '{"id":42,"created_at":"2026-01-01"}',
    );
    const stripe = { id: 'evt_1', type: 'customer.created', data: { object: { id: 'cus_1', name: 'Ada' } } };
    expect(alertExcerpt({ provider: 'stripe', type: 'customer.created', payload: stripe })).toBe(
      '{"id":"evt_1","type":"customer.created","data":{"object":{"id":"cus_1"}}}',
    );
  });

  it('a Standard Webhooks sender: the envelope and what data is about, nothing else', () => {
    const payload = {
      type: 'user.created',
      timestamp: '2026-12-03T08:00:00Z',
      data: { id: 'u_1', type: 'user', email: 'ada@example.org', dob: '1984-02-29' },
    };
    expect(alertExcerpt({ provider: 'acme', type: 'user.created', payload })).toBe(
      '{"type":"user.created","timestamp":"2026-12-03T08:00:00Z","data":{"id":"u_1","type":"user"}}',
    );
  });

  it('reads JSON text and bytes; nothing for what is not a JSON object', () => {
    const text =
      '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1","customer_email":"a@b.co"}}}';
    const expected = '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1"}}}';
    expect(alertExcerpt({ provider: 'stripe', type: 'invoice.paid', payload: text })).toBe(expected);
    const bytes = new TextEncoder().encode(text);
    expect(alertExcerpt({ provider: 'stripe', type: 'invoice.paid', payload: bytes })).toBe(expected);
    for (const payload of ['not json', '[1,2]', '"text"', 42, null, { unknown: 'field' }]) {
      expect(alertExcerpt({ provider: 'stripe', type: 'invoice.paid', payload })).toBeUndefined();
    }
  });

  it('masks allowed values too, and bounds every value, array and the whole', () => {
    const payload = {
      id: 'evt_1 mail ada@example.org',
      type: 'x'.repeat(300),
      data: {
        object: { id: 'sub_1', items: { data: Array.from({ length: 9 }, (_, i) => ({ id: `si_${i}` })) } },
      },
    };
    const type = 'customer.subscription.updated';
    const excerpt = alertExcerpt({ provider: 'stripe', type, payload }, 10_000) ?? '';
    expect(excerpt).toContain('[email]');
    expect(excerpt).not.toContain('x'.repeat(101));
    expect(excerpt).toContain('"… 4 more"');
    expect(alertExcerpt({ provider: 'stripe', type, payload }, 50)?.length).toBe(50);
  });

  it('a payload with a 1 MB key and a 1 MB value: bounded, well under a second of CPU', () => {
    const MB = 1 << 20;
    const payload = {
      id: 'evt_1Hostile',
      type: 'y'.repeat(MB),
      data: { object: { id: 'x'.repeat(MB), metadata: { ['k'.repeat(MB)]: 'v'.repeat(MB) } } },
      ['k'.repeat(MB)]: 'v'.repeat(MB),
    };
    const { value, ms } = cpuTime(() =>
      alertExcerpt({ provider: 'stripe', type: 'checkout.session.completed', payload }),
    );
    const excerpt = value ?? '';
    expect(excerpt).toContain('evt_1Hostile');
    expect(excerpt.length).toBeLessThanOrEqual(500);
    expect(ms).toBeLessThan(1000);
    console.info(`alertExcerpt, 1 MB keys and values: ${ms.toFixed(1)} ms`);
  });
});
