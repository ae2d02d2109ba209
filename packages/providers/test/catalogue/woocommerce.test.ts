import { describe, expect, it } from 'vitest';
import { wooCommerceProvider, signWooCommerce } from '../../src/catalogue/providers/woocommerce.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';
import { refusal } from './support.ts';

// WooCommerce publishes no verification library or test vector; the reference is what WC_Webhook::generate_signature
// computes (base64 of hash_hmac sha256 over the payload): https://woocommerce.com/document/webhooks/
const SECRET = 'wc-webhook-secret';
const WOOCOMMERCE = wooCommerceProvider({ secrets: [SECRET] });

describe('woocommerce', () => {
  itVerifiesBodyHmac({
    provider: WOOCOMMERCE,
    sign: signWooCommerce,
    reference: { by: 'WooCommerce', digest: 'sha256', encoding: 'base64' },
    secret: SECRET,
    body: JSON.stringify({ id: 727, status: 'processing', currency: 'EUR', total: '29.35', line_items: [] }),
    signatureHeader: 'x-wc-webhook-signature',
    headers: (signature) => ({
      'X-WC-Webhook-Signature': signature,
      'X-WC-Webhook-Source': 'https://shop.example.com/',
      'X-WC-Webhook-Topic': 'order.created',
      'X-WC-Webhook-Resource': 'order',
      'X-WC-Webhook-Event': 'created',
      'X-WC-Webhook-ID': '12',
      'X-WC-Webhook-Delivery-ID': '9f0e2d8b7c6a5f4e3d2c1b0a99887766',
    }),
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
    expect(refusal(WOOCOMMERCE, 'webhook_id=12', {}, new Date('2026-12-05T00:00:00Z'))).toBe(
      'missing_signature',
    );
  });
});
