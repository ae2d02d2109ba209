import { describe, expect, it } from 'vitest';
import { createProviders, parseStandardWebhooksEnv } from '../src/registry.ts';
import { MAX_EVENT_FIELD_LENGTH } from '../src/shared.ts';
import { signShopify } from '../src/shopify.ts';
import { signStandardWebhook } from '../src/standard-webhooks.ts';
import { signStripe } from '../src/stripe.ts';

const SW_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SW_SECRET_2 = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const T = 1_700_000_000;
const NOW = new Date(T * 1000);

function request(body: string, headers: Record<string, string>) {
  const h = new Headers(headers);
  return { rawBody: Buffer.from(body), header: (name: string) => h.get(name) };
}

describe('createProviders', () => {
  it('creates only the providers that have secrets, each under its URL name', () => {
    expect([...createProviders({ toleranceSeconds: 300 }).keys()]).toEqual([]);
    const providers = createProviders({
      stripeSecrets: ['whsec_stripe'],
      shopifySecrets: [],
      standardWebhooks: [
        { name: 'svix', secrets: [SW_SECRET] },
        { name: 'acme-2', secrets: [] },
      ],
      toleranceSeconds: 300,
    });
    expect([...providers.keys()]).toEqual(['stripe', 'svix']);
    for (const [name, provider] of providers) expect(provider.name).toBe(name);
  });

  it('wires secrets and tolerance through to working providers', () => {
    const providers = createProviders({
      stripeSecrets: ['whsec_old', 'whsec_new'],
      shopifySecrets: ['shpss_secret'],
      standardWebhooks: [{ name: 'svix', secrets: [SW_SECRET, SW_SECRET_2] }],
      toleranceSeconds: 60,
    });

    const stripeBody = '{"id":"evt_1","type":"invoice.paid"}';
    const stripeReq = request(stripeBody, {
      'stripe-signature': signStripe({ payload: stripeBody, secret: 'whsec_new', timestamp: T }),
    });
    expect(providers.get('stripe')?.verify(stripeReq, NOW).eventId).toBe('evt_1');
    expect(() => providers.get('stripe')?.verify(stripeReq, new Date((T + 61) * 1000))).toThrow(
      expect.objectContaining({ code: 'timestamp_out_of_tolerance' }),
    );

    const shopifyBody = '{"id":1,"myshopify_domain":"a.myshopify.com"}';
    const shopifyReq = request(shopifyBody, {
      'x-shopify-hmac-sha256': signShopify({ payload: shopifyBody, secret: 'shpss_secret' }),
      'x-shopify-topic': 'app/uninstalled',
      'x-shopify-shop-domain': 'a.myshopify.com',
      'x-shopify-webhook-id': 'w1',
    });
    expect(providers.get('shopify')?.verify(shopifyReq, NOW).eventId).toBe(
      'a.myshopify.com:app/uninstalled:w1',
    );

    const swBody = '{"type":"ping"}';
    const swReq = request(swBody, {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(T),
      'webhook-signature': signStandardWebhook({
        id: 'msg_1',
        timestamp: T,
        payload: swBody,
        secret: SW_SECRET_2,
      }),
    });
    expect(providers.get('svix')?.verify(swReq, NOW)).toMatchObject({
      provider: 'svix',
      eventId: 'msg_1',
      type: 'ping',
    });
  });

  it('refuses a key, type or kept header past MAX_EVENT_FIELD_LENGTH characters as invalid_payload', () => {
    const providers = createProviders({
      stripeSecrets: ['whsec_s'],
      shopifySecrets: ['shpss_secret'],
      standardWebhooks: [{ name: 'svix', secrets: [SW_SECRET] }],
      toleranceSeconds: 60,
    });
    const stripe = (id: string, type = 'invoice.paid') => {
      const body = JSON.stringify({ id, type });
      return request(body, {
        'stripe-signature': signStripe({ payload: body, secret: 'whsec_s', timestamp: T }),
      });
    };
    const shopify = (headers: Record<string, string>) =>
      request('{"id":1}', {
        'x-shopify-hmac-sha256': signShopify({ payload: '{"id":1}', secret: 'shpss_secret' }),
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': 'a.myshopify.com',
        'x-shopify-event-id': 'e1',
        ...headers,
      });
    const svix = (type: string) => {
      const body = JSON.stringify({ type });
      const signature = signStandardWebhook({ id: 'msg_1', timestamp: T, payload: body, secret: SW_SECRET });
      return request(body, {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(T),
        'webhook-signature': signature,
      });
    };
    const max = MAX_EVENT_FIELD_LENGTH;
    const invalid: unknown = expect.objectContaining({ code: 'invalid_payload' });

    expect(providers.get('stripe')?.verify(stripe('e'.repeat(max)), NOW).eventId).toHaveLength(max);
    expect(() => providers.get('stripe')?.verify(stripe('e'.repeat(max + 1)), NOW)).toThrow(invalid);
    expect(() => providers.get('stripe')?.verify(stripe('evt_1', 't'.repeat(max + 1)), NOW)).toThrow(invalid);
    expect(() =>
      providers.get('shopify')?.verify(shopify({ 'x-shopify-event-id': 'e'.repeat(max) }), NOW),
    ).toThrow(invalid);
    expect(() =>
      providers.get('shopify')?.verify(shopify({ 'x-shopify-triggered-at': 't'.repeat(max + 1) }), NOW),
    ).toThrow(invalid);
    expect(() => providers.get('svix')?.verify(svix('t'.repeat(max + 1)), NOW)).toThrow(invalid);
    // The message names the field and its length, not the value.
    expect(() => providers.get('stripe')?.verify(stripe('e'.repeat(1000)), NOW)).toThrow(
      /the event key is 1000 characters long; at most 255/,
    );
  });

  it('fails at startup on a bad configuration', () => {
    expect(() => createProviders({ stripeSecrets: ['whsec_x'], toleranceSeconds: 0 })).toThrow(
      /toleranceSeconds/,
    );
    expect(() =>
      createProviders({
        standardWebhooks: [{ name: 'stripe', secrets: [SW_SECRET] }],
        toleranceSeconds: 300,
      }),
    ).toThrow(/reserved/);
    expect(() =>
      createProviders({
        standardWebhooks: [{ name: 'Bad_Name', secrets: [SW_SECRET] }],
        toleranceSeconds: 300,
      }),
    ).toThrow(/invalid/);
    expect(() =>
      createProviders({
        standardWebhooks: [
          { name: 'svix', secrets: [SW_SECRET] },
          { name: 'svix', secrets: [SW_SECRET_2] },
        ],
        toleranceSeconds: 300,
      }),
    ).toThrow(/more than once/);
    expect(() =>
      createProviders({
        standardWebhooks: [{ name: 'svix', secrets: ['whsec_***'] }],
        toleranceSeconds: 300,
      }),
    ).toThrow(/base64/);
  });
});

describe('parseStandardWebhooksEnv', () => {
  it('parses name=secret[|secret] entries separated by commas', () => {
    expect(parseStandardWebhooksEnv(`svix=${SW_SECRET}|${SW_SECRET_2},acme=whsec_c`)).toEqual([
      { name: 'svix', secrets: [SW_SECRET, SW_SECRET_2] },
      { name: 'acme', secrets: ['whsec_c'] },
    ]);
  });

  it('treats unset, empty and blank as no senders, and ignores whitespace around parts', () => {
    expect(parseStandardWebhooksEnv(undefined)).toEqual([]);
    expect(parseStandardWebhooksEnv('')).toEqual([]);
    expect(parseStandardWebhooksEnv('  ')).toEqual([]);
    expect(parseStandardWebhooksEnv(' svix = whsec_a | whsec_b , acme=whsec_c ')).toEqual([
      { name: 'svix', secrets: ['whsec_a', 'whsec_b'] },
      { name: 'acme', secrets: ['whsec_c'] },
    ]);
  });

  it('keeps base64 padding: the name ends at the first "="', () => {
    expect(parseStandardWebhooksEnv('svix=whsec_YWJj==|whsec_YQ=')).toEqual([
      { name: 'svix', secrets: ['whsec_YWJj==', 'whsec_YQ='] },
    ]);
  });

  it.each([
    ['a bad name', 'My_Sender=whsec_a', /entry #1: .*invalid.*lower-case/],
    ['an empty name', '=whsec_a', /entry #1: .*invalid/],
    ['stripe', 'stripe=whsec_a', /entry #1: .*reserved/],
    ['shopify', 'ok=whsec_a,shopify=whsec_b', /entry #2: .*reserved/],
    ['a repeated name', 'svix=whsec_a,svix=whsec_b', /entry #2: .*more than once/],
    ['no "="', 'svix', /entry #1 has no "="/],
    ['an empty entry', 'svix=whsec_a,,acme=whsec_b', /entry #2 is empty/],
    ['no secret', 'svix=', /empty secret/],
    ['an empty secret in a rotation', 'svix=whsec_a||whsec_b', /empty secret/],
  ])('rejects %s with a clear error', (_label, value, message) => {
    expect(() => parseStandardWebhooksEnv(value)).toThrow(message);
  });

  it('never puts a secret in an error', () => {
    try {
      parseStandardWebhooksEnv('Bad=whsec_topsecretvalue');
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).not.toContain('topsecretvalue');
    }
  });

  it('round-trips into createProviders', () => {
    const providers = createProviders({
      standardWebhooks: parseStandardWebhooksEnv(`svix=${SW_SECRET},acme=${SW_SECRET_2}`),
      toleranceSeconds: 300,
    });
    expect([...providers.keys()]).toEqual(['svix', 'acme']);
  });
});
