import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { customerioProvider, signCustomerio } from '../../src/catalogue/providers/customerio.ts';
import { catalogueEntry } from '../../src/catalogue/index.ts';
import { expectForgeriesRefused, refusal, request, verifiedEvent } from './support.ts';

// Customer.io publishes no verification library or test vector; the reference is its documented recipe
// (https://docs.customer.io/api/webhooks/): the hex HMAC-SHA256 of "v0:<X-CIO-Timestamp>:<raw body>".
const SECRET = 'customerio-signing-key';
const NOW = new Date('2026-12-05T00:00:00Z');
const T = NOW.getTime() / 1000;
const BODY = JSON.stringify({
  event_id: '01E4C4CT6YDC7Y5M7FE1GWWPQJ',
  object_type: 'email',
  metric: 'opened',
  timestamp: T,
  data: { customer_id: '42', identifiers: { id: '42' } },
});
const provider = customerioProvider({ secrets: [SECRET] });
const documented = (body: string, secret: string, t: number) =>
  createHmac('sha256', secret).update(`v0:${t}:${body}`).digest('hex');

describe('customerio', () => {
  it('signs as its documented recipe does', () => {
    expect(signCustomerio({ payload: BODY, secret: SECRET, timestamp: T })).toEqual({
      'x-cio-signature': documented(BODY, SECRET, T),
      'x-cio-timestamp': String(T),
    });
  });

  it('verifies a delivery signed by the recipe: keyed by event_id, typed object_type.metric', () => {
    const headers = { 'X-CIO-Signature': documented(BODY, SECRET, T), 'X-CIO-Timestamp': String(T) };
    expect(provider.verify(request(BODY, headers), NOW)).toEqual(
      verifiedEvent('customerio', BODY, { eventId: '01E4C4CT6YDC7Y5M7FE1GWWPQJ', type: 'email.opened' }),
    );
  });

  it('refuses forgeries, a timestamp 301 s stale or absent, and a body without event_id', () => {
    expectForgeriesRefused({
      provider,
      secret: SECRET,
      body: BODY,
      signatureHeader: 'x-cio-signature',
      sign: (payload, secret) => documented(payload, secret, T),
      headers: (signature) => ({ 'x-cio-signature': signature, 'x-cio-timestamp': String(T) }),
      now: NOW,
    });
    const signed = (t: number) => signCustomerio({ payload: BODY, secret: SECRET, timestamp: t });
    expect(refusal(provider, BODY, signed(T - 301), NOW)).toBe('timestamp_out_of_tolerance');
    expect(refusal(provider, BODY, { 'x-cio-signature': signed(T)['x-cio-signature']! }, NOW)).toBe(
      'invalid_signature',
    );
    const keyless = JSON.stringify({ object_type: 'email', metric: 'opened' });
    expect(
      refusal(provider, keyless, signCustomerio({ payload: keyless, secret: SECRET, timestamp: T }), NOW),
    ).toBe('invalid_payload');
  });

  it('is a catalogue type, with CUSTOMERIO_WEBHOOK_SECRET', () => {
    expect(catalogueEntry('customerio')?.envVar).toBe('CUSTOMERIO_WEBHOOK_SECRET');
  });
});
