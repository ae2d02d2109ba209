import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/effects/decode.ts';
import type { LoadedEventRow } from '../../src/sql/ledger.ts';
import { PermanentEffectError } from '../../src/effects/types.ts';

function row(overrides: Partial<LoadedEventRow>): LoadedEventRow {
  return {
    provider: 'stripe',
    event_id: 'evt_1',
    type: 'checkout.session.completed',
    payload: '{}',
    headers: {},
    received_at: new Date('2026-12-01T00:00:00Z'),
    attempts: 1,
    completed: [],
    ...overrides,
  };
}

describe('decoding a recorded event for its effects', () => {
  it('keeps every digit of an integer beyond 2^53, and parses plain JSON as JSON', () => {
    const big = decodeEvent(row({ payload: '{"id":820982911946154508,"n":1.5}' }));
    expect(big.payload).toEqual({ id: 820982911946154508n, n: 1.5 });
    expect(decodeEvent(row({ payload: '{"a":[1,"x"]}' })).payload).toEqual({ a: [1, 'x'] });
  });

  it("names a Shopify event's shop from its kept header, else from its key", () => {
    const shopify = {
      provider: 'shopify',
      type: 'orders/create',
      event_id: 'a.myshopify.com:orders/create:e1',
    };
    expect(
      decodeEvent(row({ ...shopify, headers: { 'x-shopify-shop-domain': 'b.myshopify.com' } })),
    ).toMatchObject({ shopDomain: 'b.myshopify.com' });
    expect(decodeEvent(row({ ...shopify, headers: {} }))).toMatchObject({ shopDomain: 'a.myshopify.com' });
    expect(decodeEvent(row({}))).not.toHaveProperty('shopDomain');
  });

  it('fails for good when the payload was purged', () => {
    expect(() => decodeEvent(row({ payload: null }))).toThrow(PermanentEffectError);
  });
});
