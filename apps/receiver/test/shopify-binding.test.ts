import { randomUUID } from 'node:crypto';
import { signShopify } from '@webhook-inbox/inbox';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fixture,
  post,
  receiverEnv,
  recorded,
  SHOPIFY_SECRET,
  spawnReceiver,
  type Delivery,
  type SpawnedReceiver,
} from './helpers.ts';

// Shopify signs the body only. A merchant holding one signed body of their own shop re-sends it under another
// topic and another shop's domain, with a fresh event id: over real HTTP against a receiver process, each is
// refused with 400 and nothing is recorded or enqueued; the genuine compliance webhooks still are.

const db = useTestDatabase();
let receiver: SpawnedReceiver;

const SHOP_A = 'attacker-shop.myshopify.com';
const SHOP_B = 'victim-shop.myshopify.com';

beforeAll(async () => {
  receiver = await spawnReceiver(receiverEnv(db.url, { LOG_LEVEL: 'warn' }));
});
afterAll(async () => {
  await receiver?.stop();
});

/** A delivery of `body`, signed with the app's secret, under the given topic and shop headers. */
function delivery(topic: string, shop: string, body: string): Delivery {
  const eventId = randomUUID();
  return {
    provider: 'shopify',
    path: '/webhooks/shopify',
    body,
    headers: {
      'content-type': 'application/json',
      'X-Shopify-Hmac-Sha256': signShopify({ payload: body, secret: SHOPIFY_SECRET }),
      'X-Shopify-Topic': topic,
      'X-Shopify-Shop-Domain': shop,
      'X-Shopify-Event-Id': eventId,
      'X-Shopify-Webhook-Id': randomUUID(),
      'X-Shopify-Triggered-At': new Date().toISOString(),
    },
    key: `${shop}:${topic}:${eventId}`,
  };
}

/** Shopify's sample payloads, as Shopify would send them for `shop`. */
const bodies = {
  order: () => fixture('shopify/orders_create.json'),
  shopRedact: (shop: string) => fixture('shopify/shop_redact.json').replaceAll('{shop}.myshopify.com', shop),
  customersRedact: (shop: string) =>
    fixture('shopify/customers_redact.json').replaceAll('{shop}.myshopify.com', shop),
  dataRequest: (shop: string) =>
    fixture('shopify/customers_data_request.json').replaceAll('{shop}.myshopify.com', shop),
  uninstalled: (shop: string) =>
    fixture('shopify/app_uninstalled.json').replace(
      '"myshopify_domain": null',
      `"myshopify_domain": "${shop}"`,
    ),
};

async function expectRefused(attack: Delivery, message: RegExp): Promise<void> {
  const response = await post(receiver.url, attack);
  expect(response.status, response.body).toBe(400);
  const { error } = JSON.parse(response.body) as { error: { code: string; message: string } };
  expect(error.code).toBe('invalid_payload');
  expect(error.message).toMatch(message);
  expect(await recorded(db.url, { provider: 'shopify', eventId: attack.key })).toEqual({
    events: 0,
    jobs: 0,
  });
}

describe('a signed body re-sent under another topic or shop', () => {
  it("shop A's orders/create body as shop/redact, customers/redact, app/uninstalled for shop B: 400, nothing recorded", async () => {
    for (const topic of ['shop/redact', 'customers/redact', 'app/uninstalled']) {
      await expectRefused(
        delivery(topic, SHOP_B, bodies.order()),
        new RegExp(`not a payload of the ${topic} topic`),
      );
    }
  });

  it("shop A's own compliance and uninstall bodies under shop B's domain: 400, nothing recorded", async () => {
    await expectRefused(
      delivery('shop/redact', SHOP_B, bodies.shopRedact(SHOP_A)),
      /shop_domain.*another shop/,
    );
    await expectRefused(
      delivery('customers/redact', SHOP_B, bodies.customersRedact(SHOP_A)),
      /shop_domain.*another shop/,
    );
    await expectRefused(
      delivery('customers/data_request', SHOP_B, bodies.dataRequest(SHOP_A)),
      /shop_domain.*another shop/,
    );
    await expectRefused(
      delivery('app/uninstalled', SHOP_B, bodies.uninstalled(SHOP_A)),
      /myshopify_domain.*another shop/,
    );
  });

  it('one compliance body as another compliance topic of the same shop: 400, nothing recorded', async () => {
    // A customer's redaction is not the whole shop's; a data request deletes nothing.
    await expectRefused(
      delivery('shop/redact', SHOP_A, bodies.customersRedact(SHOP_A)),
      /not a payload of the shop\/redact topic/,
    );
    await expectRefused(
      delivery('customers/redact', SHOP_A, bodies.dataRequest(SHOP_A)),
      /not a payload of the customers\/redact topic/,
    );
    await expectRefused(
      delivery('shop/redact', SHOP_A, bodies.uninstalled(SHOP_A)),
      /not a payload of the shop\/redact topic/,
    );
  });
});

describe('genuine deliveries', () => {
  it("shop B's compliance, uninstall and order webhooks are accepted and enqueued", async () => {
    const genuine = [
      delivery('orders/create', SHOP_B, bodies.order()),
      delivery('customers/data_request', SHOP_B, bodies.dataRequest(SHOP_B)),
      delivery('customers/redact', SHOP_B, bodies.customersRedact(SHOP_B)),
      delivery('app/uninstalled', SHOP_B, bodies.uninstalled(SHOP_B)),
      delivery('shop/redact', SHOP_B, bodies.shopRedact(SHOP_B)),
    ];
    for (const d of genuine) {
      const response = await post(receiver.url, d);
      expect(response.status, response.body).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ status: 'accepted', id: d.key });
      expect(await recorded(db.url, { provider: 'shopify', eventId: d.key })).toEqual({ events: 1, jobs: 1 });
    }
  });

  it('a topic without a schema is recorded as before, whatever its body', async () => {
    const d = delivery('products/update', SHOP_B, '{"foo":"bar"}');
    const response = await post(receiver.url, d);
    expect(response.status, response.body).toBe(200);
    expect(await recorded(db.url, { provider: 'shopify', eventId: d.key })).toEqual({ events: 1, jobs: 1 });
  });
});
