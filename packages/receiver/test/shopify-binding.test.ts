import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorded } from './helpers.ts';
import { shopifySamples as bodies, signedShopifyDelivery as delivery } from './shopify-deliveries.ts';
import {
  post,
  receiverEnv,
  spawnReceiver,
  type Delivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

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

  it.each([
    ['shop/redact', bodies.shopRedact, /shop_domain names another shop/],
    ['customers/redact', bodies.customersRedact, /shop_domain names another shop/],
    ['customers/data_request', bodies.dataRequest, /shop_domain names another shop/],
    ['app/uninstalled', bodies.uninstalled, /myshopify_domain names another shop/],
  ])("shop A's own %s body under shop B's domain: 400, nothing recorded", async (topic, body, message) => {
    await expectRefused(delivery(topic, SHOP_B, body(SHOP_A)), message);
  });

  it.each([
    // A customer's redaction is not the whole shop's; a data request deletes nothing; a Shop is no redaction.
    ['customers/redact', 'shop/redact', bodies.customersRedact],
    ['customers/data_request', 'customers/redact', bodies.dataRequest],
    ['app/uninstalled', 'shop/redact', bodies.uninstalled],
  ])('the %s body as %s of the same shop: 400, nothing recorded', async (_own, topic, body) => {
    await expectRefused(
      delivery(topic, SHOP_A, body(SHOP_A)),
      new RegExp(`not a payload of the ${topic} topic`),
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

  it('a topic without a payload check is recorded, whatever its body', async () => {
    const d = delivery('products/update', SHOP_B, '{"foo":"bar"}');
    const response = await post(receiver.url, d);
    expect(response.status, response.body).toBe(200);
    expect(await recorded(db.url, { provider: 'shopify', eventId: d.key })).toEqual({ events: 1, jobs: 1 });
  });
});
