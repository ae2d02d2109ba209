/**
 * End to end over HTTP: the real receiver (in this process) verifies and records signed deliveries, the real
 * worker runs the example effects, a real SMTP server receives the email.
 */
import { createPool } from '@webhook-inbox/db';
import { EVENTS_QUEUE, messageIdFor, scopedIdempotencyKey } from '@webhook-inbox/inbox';
import { signShopify, signStripe } from '@webhook-inbox/providers';
import { useTestDatabase, waitFor, fixtureText } from '@webhook-inbox/testing';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
// The receiver is another app of this repository; the worker does not depend on it, its end-to-end test does.
import {
  parseConfig as parseReceiverConfig,
  startReceiver,
  type Receiver,
} from '../../../packages/receiver/src/index.ts';
import { shopifySamples, signedShopifyDelivery } from '../../../packages/receiver/test/shopify-deliveries.ts';
import { parseConfig, startWorker, type Worker } from '../src/index.ts';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import { post as postDelivery } from '@webhook-inbox/scenarios/receiver';
import { count, eventStatus, checkoutEvent, queueEnv, randomId } from '@webhook-inbox/scenarios/worker';

const STRIPE_SECRET = 'whsec_e2e_worker_test_secret';
const SHOPIFY_SECRET = 'shpss_e2e_worker_test_secret';

const db = useTestDatabase();
let pool: pg.Pool;
let smtp: SmtpSink;
let receiver: Receiver;
let worker: Worker;

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 2 });
  smtp = await startSmtpSink();
  const silent = pino({ level: 'silent' });
  receiver = await startReceiver(
    parseReceiverConfig({
      // The receiver and the worker connect as the application's role, which owns nothing (test/roles.test.ts).
      DATABASE_URL: db.appUrl,
      PORT: '0',
      MANAGEMENT_PORT: '0',
      STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
      SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
    }),
    { logger: silent },
  );
  worker = await startWorker(
    parseConfig({
      DATABASE_URL: db.appUrl,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'welcome@e2e.test',
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
  await smtp?.close();
  await pool?.end();
});

async function post(path: string, body: string, headers: Record<string, string>) {
  const response = await fetch(`${receiver.url}${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: response.status, body: (await response.json()) as { status?: string; id?: string } };
}

it('a signed Stripe checkout: accepted, account and subscription rows, exactly one email; a redelivery changes nothing', async () => {
  const customer = randomId('cus');
  const subscription = randomId('sub');
  const event = checkoutEvent({ customer, subscription, email: 'e2e@example.test', name: 'Eve' });
  const deliver = () =>
    post('/webhooks/stripe', event.payloadText, {
      'Stripe-Signature': signStripe({ payload: event.payloadText, secret: STRIPE_SECRET }),
    });

  expect(await deliver()).toEqual({ status: 200, body: { status: 'accepted', id: event.eventId } });
  await waitFor(async () => (await eventStatus(pool, event.eventId)) === 'processed', { timeout: 15_000 });

  const { rows: account } = await pool.query(
    'select email, name from accounts where stripe_customer_id = $1',
    [customer],
  );
  expect(account).toEqual([{ email: 'e2e@example.test', name: 'Eve' }]);
  expect(
    await count(pool, 'select count(*)::int as n from subscriptions where stripe_subscription_id = $1', [
      subscription,
    ]),
  ).toBe(1);
  const messageId = messageIdFor(scopedIdempotencyKey('sendWelcomeEmail', `account:${customer}`), 'e2e.test');
  await waitFor(() => smtp.messages.some((m) => m.messageId === messageId));

  // Stripe retries the delivery: recorded once, nothing enqueued, no second email.
  expect(await deliver()).toEqual({ status: 200, body: { status: 'duplicate', id: event.eventId } });
  const { rows } = await pool.query<{ attempts: number }>(
    'select attempts from webhook_events where event_id = $1',
    [event.eventId],
  );
  expect(rows[0]?.attempts).toBe(1);
  expect(smtp.messages.filter((m) => m.to === 'e2e@example.test')).toHaveLength(1);
});

it('a signed Shopify orders/create keeps its 19-digit id exact from the wire to the row', async () => {
  const big = '9007199254740993777';
  const body = fixtureText('shopify/orders_create.json').replace('"id":820982911946154508', `"id":${big}`);
  const shop = 'e2e-shop.myshopify.com';
  const deliveryId = randomId('evt');
  const response = await post('/webhooks/shopify', body, {
    'X-Shopify-Hmac-Sha256': signShopify({ payload: body, secret: SHOPIFY_SECRET }),
    'X-Shopify-Topic': 'orders/create',
    'X-Shopify-Shop-Domain': shop,
    'X-Shopify-Event-Id': deliveryId,
  });
  const key = `${shop}:orders/create:${deliveryId}`;
  expect(response).toEqual({ status: 200, body: { status: 'accepted', id: key } });
  await waitFor(async () => (await eventStatus(pool, key)) === 'processed', { timeout: 15_000 });
  const { rows } = await pool.query<{ order_id: string }>(
    'select order_id::text from shopify_orders where shop_domain = $1',
    [shop],
  );
  expect(rows).toEqual([{ order_id: big }]);
});

/**
 * Shopify signs the body only, so a merchant holding one signed body of their own shop (A) can re-send it under
 * another topic and another shop's domain (B) with a fresh event id. Every such delivery is refused and shop B's
 * rows stay as they were; shop B's genuine compliance webhooks are still accepted and processed.
 */
it("shop A's signed bodies re-sent for shop B are refused and B's rows stay intact; B's genuine compliance webhooks run", async () => {
  const SHOP_A = 'attacker-shop.myshopify.com';
  const SHOP_B = 'victim-shop.myshopify.com';
  // customers_redact.json asks to redact customer 191167 and orders 299938, 280263, 220458.
  const redactedOrder = '299938';
  const keptOrder = '9007199254740993555';

  const send = async (topic: string, shop: string, body: string) => {
    const delivery = signedShopifyDelivery(topic, shop, body, SHOPIFY_SECRET);
    const response = await postDelivery(receiver.url, delivery);
    const { error } = JSON.parse(response.body) as { error?: { code: string } };
    return { status: response.status, code: error?.code, key: delivery.key };
  };
  const deliver = async (topic: string, shop: string, body: string) => {
    const sent = await send(topic, shop, body);
    expect(sent.status, `${topic} for ${shop}`).toBe(200);
    await waitFor(async () => (await eventStatus(pool, sent.key)) === 'processed', {
      timeout: 15_000,
      message: `${sent.key} processed`,
    });
  };
  const ordersOf = async (shop: string) =>
    (
      await pool.query<{ order_id: string }>(
        'select order_id::text from shopify_orders where shop_domain = $1 order by order_id',
        [shop],
      )
    ).rows.map((row) => row.order_id);
  const shopRow = async (shop: string) =>
    (
      await pool.query<{ installed: boolean; uninstalled: boolean }>(
        'select installed, uninstalled_at is not null as uninstalled from shopify_shops where shop_domain = $1',
        [shop],
      )
    ).rows[0];

  const attackerOrder = shopifySamples.order();
  await deliver('orders/create', SHOP_A, attackerOrder);
  await deliver('orders/create', SHOP_B, shopifySamples.order({ order: redactedOrder, customer: '191167' }));
  await deliver('orders/create', SHOP_B, shopifySamples.order({ order: keptOrder, customer: '555' }));
  expect(await ordersOf(SHOP_B)).toEqual([redactedOrder, keptOrder]);
  expect(await shopRow(SHOP_B)).toEqual({ installed: true, uninstalled: false });

  // Shop A's own orders/create body, and A's own compliance and uninstall bodies, under shop B's domain.
  const attacks = [
    await send('shop/redact', SHOP_B, attackerOrder),
    await send('customers/redact', SHOP_B, attackerOrder),
    await send('app/uninstalled', SHOP_B, attackerOrder),
    await send('shop/redact', SHOP_B, shopifySamples.shopRedact(SHOP_A)),
    await send('customers/redact', SHOP_B, shopifySamples.customersRedact(SHOP_A)),
    await send('app/uninstalled', SHOP_B, shopifySamples.uninstalled(SHOP_A)),
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
  await deliver('customers/data_request', SHOP_B, shopifySamples.dataRequest(SHOP_B));
  expect(await ordersOf(SHOP_B)).toEqual([redactedOrder, keptOrder]);
  expect(await shopRow(SHOP_B)).toEqual({ installed: true, uninstalled: false });
  expect(
    await count(
      pool,
      'select count(*)::int as n from shopify_compliance_requests where shop_domain = $1 and redacted_at is not null',
      [SHOP_B],
    ),
  ).toBe(0);

  // Shop B's genuine webhooks: the customer's order goes, then the shop is uninstalled, then redacted.
  await deliver('customers/redact', SHOP_B, shopifySamples.customersRedact(SHOP_B));
  expect(await ordersOf(SHOP_B)).toEqual([keptOrder]);
  await deliver('app/uninstalled', SHOP_B, shopifySamples.uninstalled(SHOP_B));
  expect(await shopRow(SHOP_B)).toEqual({ installed: false, uninstalled: true });
  await deliver('shop/redact', SHOP_B, shopifySamples.shopRedact(SHOP_B));
  expect(await ordersOf(SHOP_B)).toEqual([]);
  expect(await shopRow(SHOP_B)).toBeUndefined();

  // Shop A was never touched.
  expect(await ordersOf(SHOP_A)).toEqual(['820982911946154508']);
  expect(await shopRow(SHOP_A)).toEqual({ installed: true, uninstalled: false });
});
