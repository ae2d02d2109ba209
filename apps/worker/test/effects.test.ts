import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createPool } from '@webhook-inbox/db';
import { EVENTS_QUEUE, messageIdFor, scopedIdempotencyKey } from '@webhook-inbox/inbox';
import { useTestDatabase, waitFor, fixture, fixtureText } from '@webhook-inbox/testing';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startWorker, type Worker } from '../src/index.ts';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import {
  count,
  eventStatus,
  checkoutEvent,
  queueEnv,
  randomId,
  shopifyEvent,
  startProducer,
  subscriptionEvent,
  type Producer,
  type RawEvent,
} from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();
let pool: pg.Pool;
let appPool: pg.Pool;
let producer: Producer;
let smtp: SmtpSink;
let worker: Worker;

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 4 });
  // The producer and the worker connect as the application's role, which owns nothing (test/roles.test.ts).
  appPool = createPool({ connectionString: db.appUrl, max: 4 });
  producer = await startProducer(appPool, db.appUrl);
  smtp = await startSmtpSink();
  worker = await startWorker(
    parseConfig({
      DATABASE_URL: db.appUrl,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'welcome@example.test',
      WORKER_PORT: '0',
      WORKER_POLL_SECONDS: '0.5',
      ...queueEnv(),
    }),
    { logger: pino({ level: 'silent' }) },
  );
});
afterAll(async () => {
  await worker?.close();
  await smtp?.close();
  await producer?.stop();
  await appPool?.end();
  await pool?.end();
});

/** Records the event as the receiver would and waits until the worker has processed it. */
async function deliver(event: RawEvent): Promise<void> {
  await producer.send(event);
  await waitFor(async () => (await eventStatus(pool, event.eventId)) === 'processed', {
    timeout: 15_000,
    message: `${event.type} ${event.eventId} processed`,
  });
}

async function subscription(id: string) {
  const { rows } = await pool.query<{
    status: string;
    customer_id: string;
    price_id: string | null;
    current_period_end: Date | null;
    event_created_at: Date;
    provisional: boolean;
  }>('select * from subscriptions where stripe_subscription_id = $1', [id]);
  return rows[0];
}

describe('Stripe checkout.session.completed', () => {
  it('provisions the account, sends one welcome email, and records the subscription', async () => {
    const customer = randomId('cus');
    const sub = randomId('sub');
    const event = checkoutEvent({ customer, email: 'ada@example.test', name: 'Ada', subscription: sub });
    await deliver(event);

    const { rows } = await pool.query('select email, name from accounts where stripe_customer_id = $1', [
      customer,
    ]);
    expect(rows).toEqual([{ email: 'ada@example.test', name: 'Ada' }]);
    expect(await subscription(sub)).toMatchObject({
      customer_id: customer,
      status: 'active',
      provisional: true,
    });

    const messageId = messageIdFor(
      scopedIdempotencyKey('sendWelcomeEmail', `account:${customer}`),
      'example.test',
    );
    await waitFor(() => smtp.messages.some((m) => m.messageId === messageId));
    const mail = smtp.messages.filter((m) => m.messageId === messageId);
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ to: 'ada@example.test', subject: 'Welcome aboard' });
    expect(mail[0]?.text).toContain('Hello Ada');
  });

  it('sends the welcome email once per account: a second checkout of the same customer sends none', async () => {
    const customer = randomId('cus');
    const first = checkoutEvent({ customer, email: 'bob@example.test', subscription: null });
    const second = checkoutEvent({ customer, email: 'bob@example.test', subscription: null });
    await deliver(first);
    await deliver(second);
    // And a replay of the first event.
    await producer.boss.send(EVENTS_QUEUE, { provider: 'stripe', eventId: first.eventId });
    await waitFor(
      async () =>
        (await count(pool, `select attempts as n from webhook_events where event_id = $1`, [
          first.eventId,
        ])) === 2,
    );
    await deliver(first);

    expect(smtp.messages.filter((m) => m.to === 'bob@example.test')).toHaveLength(1);
    expect(
      await count(pool, 'select count(*)::int as n from accounts where stripe_customer_id = $1', [customer]),
    ).toBe(1);
    // The second event's ledger says the email is done: under the account's key.
    const { rows } = await pool.query(
      `select effect, status from effect_runs where event_id = $1 order by effect`,
      [second.eventId],
    );
    expect(rows).toEqual([
      { effect: 'provisionAccount', status: 'completed' },
      { effect: 'recordCheckoutSubscription', status: 'completed' },
      { effect: 'sendWelcomeEmail', status: 'completed' },
    ]);
  });

  it('a guest checkout (no customer) gets its email, keyed by address, and no account', async () => {
    const event = checkoutEvent({ customer: null, email: 'Guest@Example.test', subscription: null });
    await deliver(event);
    const messageId = messageIdFor(
      scopedIdempotencyKey('sendWelcomeEmail', 'email:guest@example.test'),
      'example.test',
    );
    await waitFor(() => smtp.messages.some((m) => m.messageId === messageId));
    expect(
      await count(pool, `select count(*)::int as n from accounts where email = 'Guest@Example.test'`),
    ).toBe(0);
  });
});

describe('Stripe subscription events', () => {
  const T = 1_700_000_000;

  it('an older event delivered late never overwrites a newer one', async () => {
    const sub = randomId('sub');
    await deliver(
      subscriptionEvent('customer.subscription.updated', {
        subscription: sub,
        created: T + 10,
        status: 'past_due',
      }),
    );
    await deliver(
      subscriptionEvent('customer.subscription.created', { subscription: sub, created: T, status: 'active' }),
    );
    expect(await subscription(sub)).toMatchObject({
      status: 'past_due',
      event_created_at: new Date((T + 10) * 1000),
      price_id: 'price_1IDQm5JDPojXS6LNM31hxKzp',
      provisional: false,
    });
    await deliver(
      subscriptionEvent('customer.subscription.updated', {
        subscription: sub,
        created: T + 20,
        status: 'active',
      }),
    );
    expect(await subscription(sub)).toMatchObject({
      status: 'active',
      event_created_at: new Date((T + 20) * 1000),
    });
  });

  it('a deleted subscription is not resurrected by an event that is not newer; at the same second deletion wins', async () => {
    const sub = randomId('sub');
    await deliver(subscriptionEvent('customer.subscription.deleted', { subscription: sub, created: T + 30 }));
    await deliver(
      subscriptionEvent('customer.subscription.updated', {
        subscription: sub,
        created: T + 29,
        status: 'active',
      }),
    );
    await deliver(
      subscriptionEvent('customer.subscription.updated', {
        subscription: sub,
        created: T + 30,
        status: 'active',
      }),
    );
    expect(await subscription(sub)).toMatchObject({
      status: 'canceled',
      event_created_at: new Date((T + 30) * 1000),
    });

    const other = randomId('sub');
    await deliver(
      subscriptionEvent('customer.subscription.updated', {
        subscription: other,
        created: T + 40,
        status: 'active',
      }),
    );
    await deliver(
      subscriptionEvent('customer.subscription.deleted', { subscription: other, created: T + 40 }),
    );
    expect((await subscription(other))?.status).toBe('canceled');
  });

  it('reads the period end from the subscription (old API) or its items (2025 API)', async () => {
    const sub = randomId('sub');
    await deliver(subscriptionEvent('customer.subscription.created', { subscription: sub, created: T }));
    const fromFixture = fixture<{ data: { object: { current_period_end: number } } }>(
      'stripe/customer.subscription.created.json',
    );
    expect((await subscription(sub))?.current_period_end).toEqual(
      new Date(fromFixture.data.object.current_period_end * 1000),
    );
  });

  it('a provisional row from a checkout is replaced by any subscription event, even an older one', async () => {
    const customer = randomId('cus');
    const sub = randomId('sub');
    await deliver(checkoutEvent({ customer, subscription: sub, created: T + 100 }));
    expect(await subscription(sub)).toMatchObject({ provisional: true });
    await deliver(
      subscriptionEvent('customer.subscription.created', {
        subscription: sub,
        customer,
        created: T + 99,
        status: 'trialing',
      }),
    );
    expect(await subscription(sub)).toMatchObject({ provisional: false, status: 'trialing' });
    // A later checkout-side write never overwrites the real data.
    await deliver(checkoutEvent({ customer, subscription: sub, created: T + 200 }));
    expect(await subscription(sub)).toMatchObject({ provisional: false, status: 'trialing' });
  });
});

describe('Stripe invoices, both shapes', () => {
  it('invoice.paid (top-level subscription) and invoice.payment_failed (2025 invoice.parent) both find their subscription', async () => {
    const paid = fixture<{ id: string }>('stripe/invoice.paid.json');
    paid.id = randomId('evt');
    await deliver({
      provider: 'stripe',
      eventId: paid.id,
      type: 'invoice.paid',
      payloadText: JSON.stringify(paid),
    });

    // The 2025 fixture is the event's `data` only: wrap it in an event envelope.
    const failed = {
      id: randomId('evt'),
      object: 'event',
      api_version: '2025-03-31.basil',
      created: 1_745_433_964,
      type: 'invoice.payment_failed',
      data: fixture('stripe/invoice.payment_failed.data-only.json'),
    };
    await deliver({
      provider: 'stripe',
      eventId: failed.id,
      type: 'invoice.payment_failed',
      payloadText: JSON.stringify(failed),
    });

    expect(await subscription('sub_JsuPyCPhXWfZar')).toMatchObject({
      customer_id: 'cus_JsuO3bmrj0QlAw',
      status: 'active',
      provisional: true,
    });
    expect(await subscription('sub_1234')).toMatchObject({
      customer_id: 'cus_1234',
      status: 'past_due',
      provisional: true,
    });
  });
});

describe('Shopify', () => {
  const SHOP = 'ids-shop.myshopify.com';
  /** Shopify's app/uninstalled sample (a Shop object), naming `shop` as a real delivery does. */
  const uninstalledPayload = (shop: string | null) =>
    fixtureText('shopify/app_uninstalled.json').replace(
      '"myshopify_domain": null',
      `"myshopify_domain": ${JSON.stringify(shop)}`,
    );

  it('orders/create keeps ids above 2^53 exact', async () => {
    const big = '9007199254740993123'; // > 2^53, not representable as a double
    const text = fixtureText('shopify/orders_create.json').replace('"id":820982911946154508', `"id":${big}`);
    expect(text).toContain(big);
    const event = shopifyEvent('orders/create', text, { shop: SHOP });
    await deliver(event);
    const { rows } = await pool.query<{ order_id: string; customer_id: string | null; total_price: string }>(
      'select order_id::text, customer_id::text, total_price from shopify_orders where shop_domain = $1',
      [SHOP],
    );
    expect(rows.map((r) => r.order_id)).toEqual([big]);
    // The fixture's own ids: the customer's too.
    const original = /"customer":\{"id":(\d+)/.exec(text)?.[1];
    expect(rows[0]?.customer_id).toBe(original);
    expect(rows[0]?.total_price).toMatch(/^\d+\.\d\d$/);
    expect(
      await count(pool, 'select count(*)::int as n from shopify_shops where shop_domain = $1', [SHOP]),
    ).toBe(1);
  });

  it('a payload that does not match its schema goes dead at once, naming the field', async () => {
    const event = shopifyEvent('orders/create', JSON.stringify({ id: 'not-a-number' }), { shop: SHOP });
    await producer.send(event);
    await waitFor(async () => (await eventStatus(pool, event.eventId)) === 'dead', { timeout: 15_000 });
    const { rows } = await pool.query<{ last_error: string; attempts: number }>(
      'select last_error, attempts from webhook_events where event_id = $1',
      [event.eventId],
    );
    expect(rows[0]?.attempts).toBe(1);
    expect(rows[0]?.last_error).toMatch(/^saveOrder: orders\/create payload does not match its schema: id /);
  });

  it('app/uninstalled marks the shop, at the time Shopify triggered it', async () => {
    const shop = 'leaving.myshopify.com';
    await deliver(
      shopifyEvent('app/uninstalled', uninstalledPayload(shop), {
        shop,
        triggeredAt: '2026-01-02T03:04:05.000Z',
      }),
    );
    const { rows } = await pool.query(
      'select installed, uninstalled_at from shopify_shops where shop_domain = $1',
      [shop],
    );
    expect(rows).toEqual([{ installed: false, uninstalled_at: new Date('2026-01-02T03:04:05.000Z') }]);
  });

  it('records compliance requests; customers/redact and shop/redact delete the order rows', async () => {
    const shop = 'gdpr.myshopify.com';
    const order = (id: string, customer: string) =>
      JSON.stringify({
        id: BigInt(id).toString(),
        customer: { id: Number(customer) },
        total_price: '1.00',
      }).replace(/"id":"(\d+)"/, '"id":$1');
    await deliver(shopifyEvent('orders/create', order('9007199254740995001', '191167'), { shop }));
    await deliver(shopifyEvent('orders/create', order('9007199254740995002', '191167'), { shop }));
    await deliver(shopifyEvent('orders/create', order('9007199254740995003', '555'), { shop }));

    const request = shopifyEvent(
      'customers/data_request',
      fixtureText('shopify/customers_data_request.json'),
      { shop },
    );
    await deliver(request);
    const { rows: requests } = await pool.query(
      'select topic, customer_id::text, order_ids::text[], data_request_id::text from shopify_compliance_requests where event_id = $1',
      [request.eventId],
    );
    expect(requests).toEqual([
      {
        topic: 'customers/data_request',
        customer_id: '191167',
        order_ids: ['299938', '280263', '220458'],
        data_request_id: '9999',
      },
    ]);

    const redact = shopifyEvent(
      'customers/redact',
      JSON.stringify({ shop_domain: shop, customer: { id: 191167 }, orders_to_redact: [] }),
      { shop },
    );
    await deliver(redact);
    const remaining = await pool.query<{ order_id: string }>(
      'select order_id::text from shopify_orders where shop_domain = $1',
      [shop],
    );
    expect(remaining.rows.map((r) => r.order_id)).toEqual(['9007199254740995003']);
    const { rows: redacted } = await pool.query(
      'select redacted_orders, redacted_at is not null as done from shopify_compliance_requests where event_id = $1',
      [redact.eventId],
    );
    expect(redacted).toEqual([{ redacted_orders: 2, done: true }]);

    await deliver(shopifyEvent('shop/redact', JSON.stringify({ shop_id: 1, shop_domain: shop }), { shop }));
    expect(
      await count(pool, 'select count(*)::int as n from shopify_orders where shop_domain = $1', [shop]),
    ).toBe(0);
    expect(
      await count(pool, 'select count(*)::int as n from shopify_shops where shop_domain = $1', [shop]),
    ).toBe(0);
  });
});

describe('Shopify effects that delete or deactivate', () => {
  it('act on the shop the payload names: one naming another shop, or none, goes dead and touches nothing', async () => {
    const shop = 'kept.myshopify.com';
    const other = 'other.myshopify.com';
    const orderText = fixtureText('shopify/orders_create.json');
    await deliver(shopifyEvent('orders/create', orderText, { shop }));
    const uninstalled = fixtureText('shopify/app_uninstalled.json');
    // Recorded without the receiver's check (the effects do not rely on how an event was recorded).
    const events = [
      shopifyEvent('shop/redact', JSON.stringify({ shop_id: 1, shop_domain: other }), { shop }),
      shopifyEvent(
        'customers/redact',
        // The fixture order's customer, whose id exceeds 2^53: written as text.
        `{"shop_domain":"${other}","customer":{"id":115310627314723954},"orders_to_redact":[]}`,
        { shop },
      ),
      shopifyEvent('customers/redact', JSON.stringify({ customer: { id: 1 }, orders_to_redact: [] }), {
        shop,
      }),
      shopifyEvent(
        'app/uninstalled',
        uninstalled.replace('"myshopify_domain": null', `"myshopify_domain": "${other}"`),
        {
          shop,
        },
      ),
      shopifyEvent('app/uninstalled', uninstalled, { shop }),
    ];
    for (const event of events) {
      await producer.send(event);
      await waitFor(async () => (await eventStatus(pool, event.eventId)) === 'dead', {
        timeout: 15_000,
        message: `${event.type} ${event.eventId} dead`,
      });
      const { rows } = await pool.query<{ last_error: string }>(
        'select last_error from webhook_events where event_id = $1',
        [event.eventId],
      );
      expect(rows[0]?.last_error).toMatch(/(shop_domain|myshopify_domain) (names another shop|is missing)/);
    }
    expect(
      await count(pool, 'select count(*)::int as n from shopify_orders where shop_domain = $1', [shop]),
    ).toBe(1);
    const { rows } = await pool.query('select installed from shopify_shops where shop_domain = $1', [shop]);
    expect(rows).toEqual([{ installed: true }]);
  });
});

describe('the worker process surface', () => {
  it('serves /healthz and /metrics with effect and event counters', async () => {
    const health = await fetch(`${worker.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(metrics).toMatch(
      /webhook_effects_total\{provider="stripe",effect="provisionAccount",outcome="completed"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /webhook_events_settled_total\{provider="shopify",outcome="dead",group="default"\} [1-9]/,
    );
    expect(metrics).toMatch(/webhook_event_latency_seconds_count\{provider="stripe"\} [1-9]/);
    expect(metrics).toContain('webhook_job_batch_duration_seconds_bucket');
    expect(metrics).toContain('process_resident_memory_bytes');
  });
});

describe('mail without SMTP_URL', () => {
  it('writes each message once as an .eml file, however often it is sent', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'worker-mail-'));
    try {
      const { createMailer } = await import('../src/mail.ts');
      const mailer = createMailer({
        smtpUrl: undefined,
        from: 'welcome@example.test',
        dir,
        logger: pino({ level: 'silent' }),
      });
      const message = {
        to: 'eve@example.test',
        subject: 'Welcome aboard',
        text: 'hi',
        messageId: '<k1@example.test>',
      };
      await mailer.send(message);
      await mailer.send(message);
      mailer.close();
      const files = await readdir(dir);
      expect(files).toHaveLength(1);
      const eml = await readFile(path.join(dir, files[0]!), 'utf8');
      expect(eml).toContain('Message-ID: <k1@example.test>');
      expect(eml).toContain('To: eve@example.test');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
