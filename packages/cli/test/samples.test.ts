import { shopifyProvider, signShopify } from '@webhook-inbox/providers';
import { describe, expect, it } from 'vitest';
import { SHOPIFY_SAMPLE_TOPICS, shopifySample } from '../src/samples.ts';

// `inbox send` must send what the receiver accepts: Shopify's own samples leave the shop out
// (`{shop}.myshopify.com`, `myshopify_domain: null`), and the receiver requires the body to name the shop in
// X-Shopify-Shop-Domain.

describe('shopifySample', () => {
  const provider = shopifyProvider({ secrets: ['shpss_sample_secret'] });

  it.each(SHOPIFY_SAMPLE_TOPICS)('%s names the shop it is sent for and verifies as that topic', (topic) => {
    const sample = shopifySample(topic, { shop: 'sample-shop.myshopify.com' });
    const headers: Record<string, string> = {
      'x-shopify-hmac-sha256': signShopify({ payload: sample.body, secret: 'shpss_sample_secret' }),
      'x-shopify-topic': sample.topic,
      'x-shopify-shop-domain': sample.shop,
      'x-shopify-event-id': sample.eventId,
    };
    const event = provider.verify(
      { rawBody: Buffer.from(sample.body), header: (name) => headers[name] },
      new Date(),
    );
    expect(event.type).toBe(topic);
    expect(event.payloadText).not.toContain('{shop}');
  });
});
