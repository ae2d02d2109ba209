/**
 * Shopify signs the body only, so a merchant holding one signed body of their own shop (A) can re-send it under
 * another topic and another shop's domain (B) with a fresh event id. End to end, over HTTP to the real receiver
 * with the real worker running: every such delivery is refused and shop B's rows stay as they were; shop B's
 * genuine compliance webhooks are still accepted and processed.
 */
import { randomUUID } from 'node:crypto';
import { createPool } from '@webhook-inbox/db';
import { EVENTS_QUEUE, signShopify } from '@webhook-inbox/inbox';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
// The receiver is another app of this repository; the worker does not depend on it, this test does.
import {
  parseConfig as parseReceiverConfig,
  startReceiver,
  type Receiver,
} from '../../receiver/src/index.ts';
import { parseConfig, startWorker, type Worker } from '../src/index.ts';
import { count, eventStatus } from './support/database.ts';
import { fixtureText, queueEnv } from './support/events.ts';

const SHOPIFY_SECRET = 'shpss_confusion_test_secret';
const SHOP_A = 'attacker-shop.myshopify.com';
const SHOP_B = 'victim-shop.myshopify.com';
// customers_redact.json asks to redact customer 191167 and orders 299938, 280263, 220458.
const REDACTED_ORDER = '299938';
const KEPT_ORDER = '9007199254740993555';

const db = useTestDatabase();
let pool: pg.Pool;
let receiver: Receiver;
let worker: Worker;

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 2 });
  const silent = pino({ level: 'silent' });
  receiver = await startReceiver(
    parseReceiverConfig({ DATABASE_URL: db.url, PORT: '0', SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET }),
    { logger: silent },
  );
  worker = await startWorker(
    parseConfig({
      DATABASE_URL: db.url,
      MAIL_FROM: 'shop@confusion.test',
      WORKER_PORT: '0',
      WORKER_POLL_SECONDS: '0.5',
      ...queueEnv(),
    }),
    { logger: silent },
  );
});
afterAll(async () => {
  await worker?.close();
  await receiver?.close();
  await pool?.end();
});

interface Sent {
  status: number;
  code?: string;
  key: string;
}

/** POSTs `body` signed with the app's secret under the given topic and shop, with a fresh event id. */
async function send(topic: string, shop: string, body: string): Promise<Sent> {
  const eventId = randomUUID();
  const response = await fetch(`${receiver.url}/webhooks/shopify`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'X-Shopify-Hmac-Sha256': signShopify({ payload: body, secret: SHOPIFY_SECRET }),
      'X-Shopify-Topic': topic,
      'X-Shopify-Shop-Domain': shop,
      'X-Shopify-Event-Id': eventId,
      'X-Shopify-Triggered-At': new Date().toISOString(),
    },
  });
  const json = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: json.error?.code, key: `${shop}:${topic}:${eventId}` };
}

/** Sends a genuine delivery and waits until the worker has processed it. */
async function deliver(topic: string, shop: string, body: string): Promise<void> {
  const sent = await send(topic, shop, body);
  expect(sent.status, `${topic} for ${shop}`).toBe(200);
  await waitFor(async () => (await eventStatus(pool, sent.key)) === 'processed', {
    timeout: 15_000,
    message: `${sent.key} processed`,
  });
}

/** Shopify's orders/create sample with its own order id and customer id. */
function order(id: string, customer: string): string {
  const text = fixtureText('shopify/orders_create.json')
    .replace(/^\{"id":\d+/, `{"id":${id}`)
    .replace(
      /"admin_graphql_api_id":"gid:\/\/shopify\/Order\/\d+"/,
      `"admin_graphql_api_id":"gid://shopify/Order/${id}"`,
    )
    .replace(/"customer":\{"id":\d+/, `"customer":{"id":${customer}`);
  expect(text).toContain(`{"id":${id}`);
  return text;
}

const forShop = (name: string, shop: string) => fixtureText(name).replaceAll('{shop}.myshopify.com', shop);
const uninstalled = (shop: string) =>
  fixtureText('shopify/app_uninstalled.json').replace(
    '"myshopify_domain": null',
    `"myshopify_domain": "${shop}"`,
  );

async function ordersOf(shop: string): Promise<string[]> {
  const { rows } = await pool.query<{ order_id: string }>(
    'select order_id::text from shopify_orders where shop_domain = $1 order by order_id',
    [shop],
  );
  return rows.map((row) => row.order_id);
}

async function shopRow(shop: string): Promise<{ installed: boolean; uninstalled: boolean } | undefined> {
  const { rows } = await pool.query<{ installed: boolean; uninstalled: boolean }>(
    'select installed, uninstalled_at is not null as uninstalled from shopify_shops where shop_domain = $1',
    [shop],
  );
  return rows[0];
}

it("shop A's signed bodies re-sent for shop B are refused and shop B's rows stay intact; B's genuine compliance webhooks run", async () => {
  const attackerOrder = order('820982911946154508', '115310627314723954');
  await deliver('orders/create', SHOP_A, attackerOrder);
  await deliver('orders/create', SHOP_B, order(REDACTED_ORDER, '191167'));
  await deliver('orders/create', SHOP_B, order(KEPT_ORDER, '555'));
  expect(await ordersOf(SHOP_B)).toEqual([REDACTED_ORDER, KEPT_ORDER]);
  expect(await shopRow(SHOP_B)).toEqual({ installed: true, uninstalled: false });

  // Shop A's own orders/create body, and A's own compliance and uninstall bodies, under shop B's domain.
  const attacks = [
    await send('shop/redact', SHOP_B, attackerOrder),
    await send('customers/redact', SHOP_B, attackerOrder),
    await send('app/uninstalled', SHOP_B, attackerOrder),
    await send('shop/redact', SHOP_B, forShop('shopify/shop_redact.json', SHOP_A)),
    await send('customers/redact', SHOP_B, forShop('shopify/customers_redact.json', SHOP_A)),
    await send('app/uninstalled', SHOP_B, uninstalled(SHOP_A)),
  ];
  for (const attack of attacks) {
    expect({ status: attack.status, code: attack.code }, attack.key).toEqual({
      status: 400,
      code: 'invalid_payload',
    });
  }
  const keys = attacks.map((attack) => attack.key);
  expect(
    await count(pool, 'select count(*)::int as n from webhook_events where event_id = any($1)', [keys]),
  ).toBe(0);
  expect(
    await count(
      pool,
      `select count(*)::int as n from pgboss.job where name = $1 and data->>'eventId' = any($2)`,
      [EVENTS_QUEUE, keys],
    ),
  ).toBe(0);

  // A later event of shop B is processed; had any attack been recorded, its job was queued before this one.
  await deliver('customers/data_request', SHOP_B, forShop('shopify/customers_data_request.json', SHOP_B));
  expect(await ordersOf(SHOP_B)).toEqual([REDACTED_ORDER, KEPT_ORDER]);
  expect(await shopRow(SHOP_B)).toEqual({ installed: true, uninstalled: false });
  expect(
    await count(
      pool,
      `select count(*)::int as n from shopify_compliance_requests where shop_domain = $1 and redacted_at is not null`,
      [SHOP_B],
    ),
  ).toBe(0);

  // Shop B's genuine webhooks: the customer's order goes, then the shop is uninstalled, then redacted.
  await deliver('customers/redact', SHOP_B, forShop('shopify/customers_redact.json', SHOP_B));
  expect(await ordersOf(SHOP_B)).toEqual([KEPT_ORDER]);
  await deliver('app/uninstalled', SHOP_B, uninstalled(SHOP_B));
  expect(await shopRow(SHOP_B)).toEqual({ installed: false, uninstalled: true });
  await deliver('shop/redact', SHOP_B, forShop('shopify/shop_redact.json', SHOP_B));
  expect(await ordersOf(SHOP_B)).toEqual([]);
  expect(await shopRow(SHOP_B)).toBeUndefined();

  // Shop A was never touched.
  expect(await ordersOf(SHOP_A)).toEqual(['820982911946154508']);
  expect(await shopRow(SHOP_A)).toEqual({ installed: true, uninstalled: false });
});
