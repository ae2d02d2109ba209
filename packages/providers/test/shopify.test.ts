import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WebhookError } from '../src/errors.ts';
import { SHOPIFY_CHECKED_TOPICS } from '../src/shopify-payloads.ts';
import { shopifyProvider, signShopify } from '../src/shopify.ts';
import type { SignedRequest } from '../src/types.ts';
import { codeOf } from './catalogue/support.ts';

// Shopify/shopify-app-js@ef2043d4 packages/apps/shopify-api/lib/webhooks/__tests__/validate.test.ts
const VECTOR_SECRET = 'test_secret_key';
const VECTOR_BODY = '{"foo": "bar"}';
const VECTOR_HMAC = 'B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=';
// HMAC-SHA256('test_secret_key', exact bytes of test/fixtures/shopify/orders_create.json), and of the same file
// after JSON.parse then JSON.stringify (which rounds its ids beyond 2^53): that one must not verify.
const ORDERS_CREATE_HMAC = 'UHlYWmiv2AIBlMO8wCY/Q0dtFohIBlmRouOqcoiv7V4=';
const ORDERS_CREATE_RESERIALIZED_HMAC = 'B5GX2QNeZCow+X3/j909Ci/BJ/q1zGiNuKosbF6I0gQ=';

const SECRET = VECTOR_SECRET;
const OTHER_SECRET = 'another_app_secret';
const NOW = new Date('2026-01-01T00:00:00Z');
const SHOP = 'dev-shop.myshopify.com';
const EVENT_ID = '7c0b9a8e-2a6e-4c55-9f4e-0d6f8a1b2c3d';
const WEBHOOK_ID = 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043';
/** The smallest orders/create body the payload check accepts (a subscription's `includeFields` can trim to it). */
const ORDER_BODY =
  '{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/820982911946154508"}';
/** A topic no payload check applies to. */
const UNCHECKED_TOPIC = 'products/update';

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../../../test/fixtures/shopify/${name}`, import.meta.url));

/**
 * Shopify's sample payload of each checked topic, naming `shop` as a real delivery does: the compliance samples
 * say `{shop}.myshopify.com`, and the app/uninstalled sample (a Shop object) has `myshopify_domain: null`.
 */
function sampleFor(topic: string, shop = SHOP): string {
  const text = (name: string) => fixture(name).toString('utf8');
  switch (topic) {
    case 'orders/create':
      return text('orders_create.json');
    case 'app/uninstalled':
      return text('app_uninstalled.json').replace(
        '"myshopify_domain": null',
        `"myshopify_domain": "${shop}"`,
      );
    case 'customers/data_request':
      return text('customers_data_request.json').replaceAll('{shop}.myshopify.com', shop);
    case 'customers/redact':
      return text('customers_redact.json').replaceAll('{shop}.myshopify.com', shop);
    case 'shop/redact':
      return text('shop_redact.json').replaceAll('{shop}.myshopify.com', shop);
    default:
      throw new Error(`no sample for ${topic}`);
  }
}

function request(body: string | Uint8Array, headers: Record<string, string>): SignedRequest {
  const h = new Headers(headers);
  return { rawBody: typeof body === 'string' ? Buffer.from(body) : body, header: (name) => h.get(name) };
}

function deliveryHeaders(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const base: Record<string, string | undefined> = {
    'X-Shopify-Topic': 'orders/create',
    'X-Shopify-Shop-Domain': SHOP,
    'X-Shopify-Event-Id': EVENT_ID,
    'X-Shopify-Webhook-Id': WEBHOOK_ID,
    'X-Shopify-Triggered-At': '2026-01-01T00:00:00.000Z',
    'X-Shopify-API-Version': '2025-10',
    ...overrides,
  };
  return Object.fromEntries(
    Object.entries(base).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

function signed(
  body: string | Uint8Array,
  overrides: Record<string, string | undefined> = {},
  secret = SECRET,
): SignedRequest {
  return request(body, {
    'X-Shopify-Hmac-Sha256': signShopify({ payload: body, secret }),
    ...deliveryHeaders(overrides),
  });
}

const provider = shopifyProvider({ secrets: [SECRET] });

describe('third-party vectors', () => {
  it('shopify-app-js\'s {"foo": "bar"} vector', () => {
    expect(signShopify({ payload: VECTOR_BODY, secret: VECTOR_SECRET })).toBe(VECTOR_HMAC);
    // Under a topic without a payload check: the vector's body is no order.
    const event = provider.verify(
      request(VECTOR_BODY, {
        'X-Shopify-Hmac-Sha256': VECTOR_HMAC,
        ...deliveryHeaders({ 'X-Shopify-Topic': UNCHECKED_TOPIC }),
      }),
      NOW,
    );
    expect(event.payloadText).toBe(VECTOR_BODY);
  });

  it('orders_create.json verifies byte for byte; its ids beyond 2^53 survive in payloadText', () => {
    const bytes = fixture('orders_create.json');
    expect(signShopify({ payload: bytes, secret: SECRET })).toBe(ORDERS_CREATE_HMAC);
    const event = provider.verify(
      request(bytes, { 'X-Shopify-Hmac-Sha256': ORDERS_CREATE_HMAC, ...deliveryHeaders() }),
      NOW,
    );
    expect(event.payloadText).toBe(bytes.toString('utf8'));
    expect(event.payloadText).toContain('"id":820982911946154508');
    expect(JSON.stringify(JSON.parse(event.payloadText))).not.toContain('"id":820982911946154508');
  });

  it('orders_create.json re-serialized does not verify, either way round', () => {
    const bytes = fixture('orders_create.json');
    const reserialized = JSON.stringify(JSON.parse(bytes.toString('utf8')));
    expect(signShopify({ payload: reserialized, secret: SECRET })).toBe(ORDERS_CREATE_RESERIALIZED_HMAC);
    const headers = deliveryHeaders();
    expect(
      codeOf(() =>
        provider.verify(
          request(reserialized, { 'X-Shopify-Hmac-Sha256': ORDERS_CREATE_HMAC, ...headers }),
          NOW,
        ),
      ),
    ).toBe('invalid_signature');
    expect(
      codeOf(() =>
        provider.verify(
          request(bytes, { 'X-Shopify-Hmac-Sha256': ORDERS_CREATE_RESERIALIZED_HMAC, ...headers }),
          NOW,
        ),
      ),
    ).toBe('invalid_signature');
  });
});

describe('shopifyProvider construction', () => {
  it('refuses no secret, an empty secret, and a secret with whitespace', () => {
    expect(() => shopifyProvider({ secrets: [] })).toThrow(/at least one secret/);
    expect(() => shopifyProvider({ secrets: [''] })).toThrow(/empty/);
    expect(() => shopifyProvider({ secrets: [' secret'] })).toThrow(/whitespace/);
  });
});

describe('shopifyProvider.verify', () => {
  it('event key is shop:topic:event id; type is the topic; kept headers exclude the HMAC', () => {
    const body = sampleFor('app/uninstalled');
    const event = provider.verify(signed(body, { 'X-Shopify-Topic': 'app/uninstalled' }), NOW);
    expect(event).toEqual({
      provider: 'shopify',
      eventId: `${SHOP}:app/uninstalled:${EVENT_ID}`,
      type: 'app/uninstalled',
      payloadText: body,
      headers: {
        'x-shopify-topic': 'app/uninstalled',
        'x-shopify-shop-domain': SHOP,
        'x-shopify-event-id': EVENT_ID,
        'x-shopify-webhook-id': WEBHOOK_ID,
        'x-shopify-triggered-at': '2026-01-01T00:00:00.000Z',
        'x-shopify-api-version': '2025-10',
      },
      body: JSON.parse(body) as unknown,
    });
    expect(JSON.stringify(event.headers)).not.toContain(signShopify({ payload: body, secret: SECRET }));
  });

  it('refuses a non-canonical base64 HMAC that decodes to the right bytes (padding bits set)', () => {
    const body = fixture('app_uninstalled.json');
    const topic = { 'X-Shopify-Topic': UNCHECKED_TOPIC };
    const hmac = signShopify({ payload: body, secret: SECRET });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(hmac[42]!);
    for (const padding of [1, 2, 3]) {
      const variant = `${hmac.slice(0, 42)}${alphabet[last + padding]}=`;
      // The same 32 bytes once decoded: only the string differs.
      expect(Buffer.from(variant, 'base64')).toEqual(Buffer.from(hmac, 'base64'));
      const delivery = request(body, { 'X-Shopify-Hmac-Sha256': variant, ...deliveryHeaders(topic) });
      expect(codeOf(() => provider.verify(delivery, NOW))).toBe('invalid_signature');
    }
    expect(codeOf(() => provider.verify(signed(body, topic), NOW))).toBe('no error');
  });

  it('falls back to the webhook id when the event id header is absent (or empty)', () => {
    for (const eventId of [undefined, '']) {
      const event = provider.verify(signed(ORDER_BODY, { 'X-Shopify-Event-Id': eventId }), NOW);
      expect(event.eventId).toBe(`${SHOP}:orders/create:${WEBHOOK_ID}`);
      expect(event.headers).not.toHaveProperty('x-shopify-event-id');
    }
  });

  it('accepts the newer unprefixed Shopify-* header style, and the two styles mixed', () => {
    const body = sampleFor('customers/data_request');
    const unprefixed = request(body, {
      'Shopify-Hmac-Sha256': signShopify({ payload: body, secret: SECRET }),
      'Shopify-Topic': 'customers/data_request',
      'Shopify-Shop-Domain': SHOP,
      'Shopify-Event-Id': EVENT_ID,
      'Shopify-Webhook-Id': WEBHOOK_ID,
      'Shopify-Triggered-At': '2026-01-01T00:00:00.000Z',
      'Shopify-API-Version': '2026-01',
    });
    const event = provider.verify(unprefixed, NOW);
    expect(event.eventId).toBe(`${SHOP}:customers/data_request:${EVENT_ID}`);
    expect(event.headers).toEqual({
      'x-shopify-topic': 'customers/data_request',
      'x-shopify-shop-domain': SHOP,
      'x-shopify-event-id': EVENT_ID,
      'x-shopify-webhook-id': WEBHOOK_ID,
      'x-shopify-triggered-at': '2026-01-01T00:00:00.000Z',
      'x-shopify-api-version': '2026-01',
    });

    const mixed = request(body, {
      'Shopify-Hmac-Sha256': signShopify({ payload: body, secret: SECRET }),
      'X-Shopify-Topic': 'customers/data_request',
      'shopify-shop-domain': SHOP,
      'Shopify-Webhook-Id': WEBHOOK_ID,
    });
    expect(provider.verify(mixed, NOW).eventId).toBe(`${SHOP}:customers/data_request:${WEBHOOK_ID}`);
  });

  it('header names are case-insensitive; a lower-case-only lookup works', () => {
    const hmac = signShopify({ payload: ORDER_BODY, secret: SECRET });
    const upper = request(ORDER_BODY, {
      'X-SHOPIFY-HMAC-SHA256': hmac,
      'X-SHOPIFY-TOPIC': 'orders/create',
      'X-SHOPIFY-SHOP-DOMAIN': SHOP,
      'X-SHOPIFY-EVENT-ID': EVENT_ID,
    });
    expect(provider.verify(upper, NOW).eventId).toBe(`${SHOP}:orders/create:${EVENT_ID}`);
    const nodeStyle: Record<string, string> = {
      'x-shopify-hmac-sha256': hmac,
      'x-shopify-topic': 'orders/create',
      'x-shopify-shop-domain': SHOP,
      'x-shopify-webhook-id': WEBHOOK_ID,
    };
    expect(
      provider.verify({ rawBody: Buffer.from(ORDER_BODY), header: (n) => nodeStyle[n] }, NOW).eventId,
    ).toBe(`${SHOP}:orders/create:${WEBHOOK_ID}`);
  });

  it('missing or empty HMAC header → missing_signature', () => {
    expect(codeOf(() => provider.verify(request(VECTOR_BODY, deliveryHeaders()), NOW))).toBe(
      'missing_signature',
    );
    expect(
      codeOf(() =>
        provider.verify(request(VECTOR_BODY, { 'X-Shopify-Hmac-Sha256': '', ...deliveryHeaders() }), NOW),
      ),
    ).toBe('missing_signature');
  });

  it.each([
    ['garbage', 'not base64 at all!'],
    ['hex instead of base64', 'a'.repeat(64)],
    ['truncated', VECTOR_HMAC.slice(0, 43)],
    ['missing padding', VECTOR_HMAC.slice(0, 43) + 'A'],
    ['extra characters', `${VECTOR_HMAC}AAAA`],
    ['embedded junk', `${VECTOR_HMAC.slice(0, 10)}*${VECTOR_HMAC.slice(11)}`],
    ['prefixed', `sha256=${VECTOR_HMAC}`],
    ['two values', `${VECTOR_HMAC}, ${VECTOR_HMAC}`],
  ])('malformed HMAC header (%s) → invalid_signature, not a crash', (_label, header) => {
    expect(
      codeOf(() =>
        provider.verify(request(VECTOR_BODY, { 'X-Shopify-Hmac-Sha256': header, ...deliveryHeaders() }), NOW),
      ),
    ).toBe('invalid_signature');
  });

  it('the base64url spelling of a good HMAC is refused (only canonical base64 is accepted)', () => {
    const bytes = fixture('orders_create.json');
    const base64url = ORDERS_CREATE_HMAC.replace(/\+/g, '-').replace(/\//g, '_');
    expect(base64url).not.toBe(ORDERS_CREATE_HMAC);
    const req = request(bytes, { 'X-Shopify-Hmac-Sha256': base64url, ...deliveryHeaders() });
    expect(codeOf(() => provider.verify(req, NOW))).toBe('invalid_signature');
  });

  it('wrong secret → invalid_signature with a helpful message that leaks nothing', () => {
    const req = signed(VECTOR_BODY, {}, OTHER_SECRET);
    let message = '';
    try {
      provider.verify(req, NOW);
    } catch (error) {
      expect((error as WebhookError).code).toBe('invalid_signature');
      message = (error as Error).message;
    }
    expect(message).toMatch(/raw request body/);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain(OTHER_SECRET);
    expect(message).not.toContain(req.header('x-shopify-hmac-sha256'));
  });

  it('rotation: either configured secret verifies', () => {
    const rotating = shopifyProvider({ secrets: [OTHER_SECRET, SECRET] });
    expect(rotating.verify(signed(ORDER_BODY, {}, SECRET), NOW).type).toBe('orders/create');
    expect(rotating.verify(signed(ORDER_BODY, {}, OTHER_SECRET), NOW).type).toBe('orders/create');
  });

  it.each([
    ['topic', { 'X-Shopify-Topic': undefined }],
    ['shop domain', { 'X-Shopify-Shop-Domain': undefined }],
    ['both event id and webhook id', { 'X-Shopify-Event-Id': undefined, 'X-Shopify-Webhook-Id': undefined }],
  ])('validly signed but without %s → invalid_payload', (_label, overrides) => {
    expect(codeOf(() => provider.verify(signed(VECTOR_BODY, overrides), NOW))).toBe('invalid_payload');
  });

  it('missing delivery headers with a bad HMAC is a signature error (authenticity first)', () => {
    const req = request(VECTOR_BODY, {
      'X-Shopify-Hmac-Sha256': signShopify({ payload: 'x', secret: SECRET }),
    });
    expect(codeOf(() => provider.verify(req, NOW))).toBe('invalid_signature');
  });

  it.each([
    ['not JSON', 'hello'],
    ['a JSON array', '[1,2]'],
    ['a JSON number', '820982911946154508'],
    ['empty', ''],
  ])('validly signed body that is %s → invalid_payload', (_label, body) => {
    expect(codeOf(() => provider.verify(signed(body), NOW))).toBe('invalid_payload');
  });

  it('validly signed invalid UTF-8 → invalid_payload', () => {
    expect(
      codeOf(() => provider.verify(signed(Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])), NOW)),
    ).toBe('invalid_payload');
  });

  it('a unicode body verifies and its text is kept exactly', () => {
    const body = '{"note":"Café — 注文 🛒","id":820982911946154508}';
    expect(provider.verify(signed(body), NOW).payloadText).toBe(body);
  });
});

describe('payload bound to topic and shop', () => {
  const CHECKED = [
    'orders/create',
    'app/uninstalled',
    'customers/data_request',
    'customers/redact',
    'shop/redact',
  ];
  const OTHER_SHOP = 'other-shop.myshopify.com';

  function messageOf(fn: () => unknown): string {
    try {
      fn();
    } catch (error) {
      if (error instanceof WebhookError) return `${error.code}: ${error.message}`;
      throw error;
    }
    return 'no error';
  }

  it('the topics with a payload check are the ones the example effects handle', () => {
    expect([...SHOPIFY_CHECKED_TOPICS].sort()).toEqual([...CHECKED].sort());
  });

  it.each(CHECKED)("Shopify's %s sample verifies under its own topic and no other checked topic", (topic) => {
    const body = sampleFor(topic);
    expect(provider.verify(signed(body, { 'X-Shopify-Topic': topic }), NOW).type).toBe(topic);
    for (const other of CHECKED.filter((t) => t !== topic)) {
      expect(
        messageOf(() => provider.verify(signed(body, { 'X-Shopify-Topic': other }), NOW)),
        other,
      ).toMatch(new RegExp(`^invalid_payload: shopify: the body is not a payload of the ${other} topic: `));
    }
  });

  it.each([
    ['app/uninstalled', 'myshopify_domain'],
    ['customers/data_request', 'shop_domain'],
    ['customers/redact', 'shop_domain'],
    ['shop/redact', 'shop_domain'],
  ])("%s for another shop than the header's → invalid_payload naming %s, not its value", (topic, field) => {
    const message = messageOf(() =>
      provider.verify(signed(sampleFor(topic, OTHER_SHOP), { 'X-Shopify-Topic': topic }), NOW),
    );
    expect(message).toMatch(
      new RegExp(`^invalid_payload: shopify: the body's ${field} names another shop than`),
    );
    expect(message).not.toContain(OTHER_SHOP);
    expect(message).not.toContain(SHOP);
  });

  it('compares the shop exactly: another case, a suffix or a prefix is another shop', () => {
    for (const shop of ['Dev-Shop.myshopify.com', `${SHOP}.evil.example`, `x${SHOP}`]) {
      expect(
        codeOf(() =>
          provider.verify(signed(sampleFor('shop/redact', shop), { 'X-Shopify-Topic': 'shop/redact' }), NOW),
        ),
      ).toBe('invalid_payload');
    }
  });

  it('accepts what genuine deliveries may leave out or vary', () => {
    const accepts = (topic: string, body: unknown) =>
      messageOf(() => provider.verify(signed(JSON.stringify(body), { 'X-Shopify-Topic': topic }), NOW));
    // shop_id: absent, or a string of digits; nothing to compare it with, the headers carry no shop id.
    expect(accepts('shop/redact', { shop_domain: SHOP })).toBe('no error');
    expect(accepts('shop/redact', { shop_id: '954889', shop_domain: SHOP })).toBe('no error');
    // A customer known by email only; no orders to redact; no data request id.
    expect(
      accepts('customers/redact', { shop_domain: SHOP, customer: { email: 'a@b.c' }, orders_to_redact: [] }),
    ).toBe('no error');
    expect(accepts('customers/data_request', { shop_id: 1, shop_domain: SHOP, customer: { id: 2 } })).toBe(
      'no error',
    );
    // app/uninstalled: `domain` is the primary (often custom) domain, not compared; `id` may be trimmed away.
    expect(
      accepts('app/uninstalled', { id: 548380009, domain: 'www.super-toys.example', myshopify_domain: SHOP }),
    ).toBe('no error');
    expect(accepts('app/uninstalled', { myshopify_domain: SHOP })).toBe('no error');
    // Fields Shopify adds later are allowed.
    expect(accepts('shop/redact', { shop_id: 1, shop_domain: SHOP, requested_at: '2026-01-01' })).toBe(
      'no error',
    );
    // An order id beyond 2^53 with its GID.
    expect(messageOf(() => provider.verify(signed(ORDER_BODY), NOW))).toBe('no error');
  });

  it.each([
    ['orders/create', '{"foo":"bar"}', /id /],
    ['orders/create', '{"id":"820982911946154508"}', /id /],
    ['orders/create', '{"id":1.5}', /id is not an integer/],
    [
      'orders/create',
      '{"id":1,"admin_graphql_api_id":"gid://shopify/Customer/1"}',
      /admin_graphql_api_id is not an Order GID/,
    ],
    ['app/uninstalled', `{"id":1,"myshopify_domain":null,"domain":"${SHOP}"}`, /myshopify_domain /],
    ['shop/redact', '{"shop_id":1}', /shop_domain /],
    ['shop/redact', `{"shop_id":1,"shop_domain":""}`, /shop_domain /],
    [
      'shop/redact',
      `{"shop_domain":"${SHOP}","customer":{"id":1}}`,
      /customer belongs to another topic's payload/,
    ],
    ['customers/redact', `{"shop_domain":"${SHOP}","orders_to_redact":[]}`, /customer /],
    ['customers/redact', `{"shop_domain":"${SHOP}","customer":{"id":1}}`, /orders_to_redact /],
    [
      'customers/redact',
      `{"shop_domain":"${SHOP}","customer":{"id":1},"orders_to_redact":["x"]}`,
      /orders_to_redact\.0 /,
    ],
    [
      'customers/data_request',
      `{"shop_domain":"${SHOP}","customer":{"id":1},"orders_to_redact":[1]}`,
      /orders_to_redact belongs/,
    ],
  ])('%s refuses %s', (topic, body, issue) => {
    const message = messageOf(() => provider.verify(signed(body, { 'X-Shopify-Topic': topic }), NOW));
    expect(message).toMatch(
      new RegExp(`^invalid_payload: shopify: the body is not a payload of the ${topic} topic: `),
    );
    expect(message).toMatch(issue);
  });

  it("Shopify's app/uninstalled sample itself (myshopify_domain null) names no shop and is refused", () => {
    const sample = fixture('app_uninstalled.json');
    expect(codeOf(() => provider.verify(signed(sample, { 'X-Shopify-Topic': 'app/uninstalled' }), NOW))).toBe(
      'invalid_payload',
    );
  });

  it('messages carry no payload values', () => {
    const body = sampleFor('customers/redact').replace('"orders_to_redact"', '"orders_requested"');
    const message = messageOf(() =>
      provider.verify(signed(body, { 'X-Shopify-Topic': 'customers/redact' }), NOW),
    );
    expect(message).toMatch(/^invalid_payload/);
    for (const value of ['john@example.com', '555-625-1199', '191167', '299938'])
      expect(message).not.toContain(value);
  });

  it('any other topic, even one named like an object property, is recorded without a payload check', () => {
    for (const topic of [UNCHECKED_TOPIC, '__proto__', 'constructor', 'toString', 'ORDERS/CREATE']) {
      expect(provider.verify(signed(VECTOR_BODY, { 'X-Shopify-Topic': topic }), NOW).type).toBe(topic);
    }
  });
});

describe('properties', () => {
  it('random HMAC headers and bodies never verify and only ever throw a signature WebhookError', () => {
    const hmacish = fc.oneof(
      fc.string(),
      fc.base64String({ minLength: 40, maxLength: 48 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64')),
    );
    fc.assert(
      fc.property(fc.option(hmacish, { nil: undefined }), fc.uint8Array({ maxLength: 256 }), (hmac, body) => {
        const headers = deliveryHeaders();
        if (hmac !== undefined) headers['X-Shopify-Hmac-Sha256'] = hmac;
        expect(['missing_signature', 'invalid_signature']).toContain(
          codeOf(() => provider.verify(request(body, headers), NOW)),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('any change to a signed body or its HMAC is refused', () => {
    fc.assert(
      fc.property(
        fc.json().filter((j) => j.startsWith('{')),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        (body, position, xor, mutateBody) => {
          const bytes = Buffer.from(body);
          const hmac = Buffer.from(signShopify({ payload: bytes, secret: SECRET }), 'base64');
          const headers = deliveryHeaders({ 'X-Shopify-Topic': UNCHECKED_TOPIC });
          headers['X-Shopify-Hmac-Sha256'] = hmac.toString('base64');
          expect(provider.verify(request(bytes, headers), NOW).payloadText).toBe(body);
          const target = mutateBody ? bytes : hmac;
          const i = position % target.length;
          target[i] = (target[i] ?? 0) ^ xor;
          headers['X-Shopify-Hmac-Sha256'] = hmac.toString('base64');
          expect(codeOf(() => provider.verify(request(bytes, headers), NOW))).toBe('invalid_signature');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a correctly signed arbitrary body, with arbitrary delivery headers, verifies or is invalid_payload', () => {
    const optional = fc.option(fc.string({ maxLength: 20 }), { nil: undefined });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 128 }),
          fc.json().map((j) => Buffer.from(j)),
        ),
        fc.record({ topic: optional, shop: optional, eventId: optional, webhookId: optional }),
        (body, meta) => {
          const headers: Record<string, string> = {
            'X-Shopify-Hmac-Sha256': signShopify({ payload: body, secret: SECRET }),
          };
          // Headers refuses control characters; keep to what HTTP can carry.
          const put = (name: string, value: string | undefined) => {
            if (value !== undefined && /^[\x20-\x7e]*$/.test(value)) headers[name] = value;
          };
          put('X-Shopify-Topic', meta.topic);
          put('X-Shopify-Shop-Domain', meta.shop);
          put('X-Shopify-Event-Id', meta.eventId);
          put('X-Shopify-Webhook-Id', meta.webhookId);
          try {
            const event = provider.verify(request(body, headers), NOW);
            expect(Buffer.from(event.payloadText)).toEqual(Buffer.from(body));
            expect(event.eventId.split(':').length).toBeGreaterThanOrEqual(3);
          } catch (error) {
            expect(error).toBeInstanceOf(WebhookError);
            expect((error as WebhookError).code).toBe('invalid_payload');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
