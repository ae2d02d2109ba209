import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { wooCommerceProvider, signWooCommerce } from '../../../src/providers/catalogue/woocommerce.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';
import { refusal } from './support.ts';

// WooCommerce publishes no verification library or test vector; the reference is what WC_Webhook::generate_signature
// computes (base64 of hash_hmac sha256 over the payload): https://woocommerce.com/document/webhooks/
const SECRET = 'wc-webhook-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  id: 727,
  status: 'processing',
  currency: 'EUR',
  total: '29.35',
  line_items: [],
});
const WOOCOMMERCE = wooCommerceProvider({ secrets: [SECRET] });
const sign = (payload: string, secret: string) => signWooCommerce({ payload, secret });
const headers = (signature: string): Record<string, string> => ({
  'X-WC-Webhook-Signature': signature,
  'X-WC-Webhook-Source': 'https://shop.example.com/',
  'X-WC-Webhook-Topic': 'order.created',
  'X-WC-Webhook-Resource': 'order',
  'X-WC-Webhook-Event': 'created',
  'X-WC-Webhook-ID': '12',
  'X-WC-Webhook-Delivery-ID': '9f0e2d8b7c6a5f4e3d2c1b0a99887766',
});

describe('woocommerce', () => {
  it('signs as WooCommerce documents it: the base64 HMAC-SHA256 of the body', () => {
    expect(sign(BODY, SECRET)).toBe(createHmac('sha256', SECRET).update(BODY).digest('base64'));
  });

  itVerifiesBodyHmac({
    provider: WOOCOMMERCE,
    secret: SECRET,
    body: BODY,
    signatureHeader: 'x-wc-webhook-signature',
    sign,
    headers,
    now: NOW,
    event: {
      eventId: 'https://shop.example.com/:12:9f0e2d8b7c6a5f4e3d2c1b0a99887766',
      type: 'order.created',
      headers: {
        'x-wc-webhook-source': 'https://shop.example.com/',
        'x-wc-webhook-topic': 'order.created',
        'x-wc-webhook-resource': 'order',
        'x-wc-webhook-event': 'created',
      },
    },
    keyless: { header: 'x-wc-webhook-delivery-id' },
  });

  it('refuses the unsigned ping sent when a webhook is saved', () => {
    // It carries no signature: a handshake for the sources layer.
    expect(refusal(WOOCOMMERCE, 'webhook_id=12', {}, NOW)).toBe('missing_signature');
  });
});
