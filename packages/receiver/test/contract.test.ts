import { EVENTS_QUEUE } from '@webhook-inbox/inbox';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, recorded, send, sql, standardDelivery, type TestApp } from './helpers.ts';
import {
  shopifyDelivery,
  stripeDelivery,
  STRIPE_OLD_SECRET,
  SW_NAME,
  type Delivery,
} from '@webhook-inbox/scenarios/receiver';

// Every answer of the webhook route (the table in packages/receiver/README.md), for each provider, through
// app.request() on the real app (real pool, real pg-boss sender, real providers) against this file's own database.

const db = useTestDatabase();
let t: TestApp;
const LIMIT = 64 * 1024;

beforeAll(async () => {
  // As the application's role, which owns nothing (test/roles.test.ts); the assertions read as the owner.
  t = await createTestApp(db.appUrl, { maxBodyBytes: LIMIT });
});
afterAll(async () => {
  await t?.close();
});

async function expectError(response: Response, status: number, code: string): Promise<void> {
  if (status < 500) expect(response.headers.get('retry-after')).toBeNull();
  const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
  expect({ status: response.status, code: body.error?.code }).toEqual({ status, code });
  expect(typeof body.error?.message).toBe('string');
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
}

/** A refused request must leave the database exactly as it was. */
async function expectRefused(
  delivery: Delivery,
  status: number,
  code: string,
  init?: RequestInit,
): Promise<void> {
  const before = await recorded(db.url);
  await expectError(await send(t.app, delivery, init), status, code);
  expect(await recorded(db.url)).toEqual(before);
}

const providers = {
  stripe: {
    make: (options: Parameters<typeof stripeDelivery>[0] = {}) => stripeDelivery(options),
    timestamped: true,
  },
  shopify: {
    make: (options: { secret?: string; signature?: string | null; body?: string } = {}) =>
      shopifyDelivery(options),
    timestamped: false,
  },
  [SW_NAME]: {
    make: (options: Parameters<typeof standardDelivery>[0] = {}) => standardDelivery(options),
    timestamped: true,
  },
} as const;

describe.each(Object.entries(providers))('POST /webhooks/%s', (_name, provider) => {
  it('new event: 200 accepted with its key, one row and one job (one commit)', async () => {
    const delivery = provider.make();
    const response = await send(t.app, delivery);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'accepted', id: delivery.key });
    expect(await recorded(db.url, { provider: delivery.provider, eventId: delivery.key })).toEqual({
      events: 1,
      jobs: 1,
    });
    const row = await sql(
      db.url,
      `select type, status, source, p.payload::text as payload, headers
         from webhook_events e join webhook_event_payloads p using (provider, event_id, received_at)
        where provider = $1 and event_id = $2`,
      [delivery.provider, delivery.key],
    );
    expect(row.rows[0]).toMatchObject({ status: 'received', source: 'webhook' });
    expect(JSON.parse((row.rows[0] as { payload: string }).payload)).toEqual(JSON.parse(delivery.body));
    // Signatures are never stored.
    expect(JSON.stringify(row.rows[0])).not.toMatch(/hmac|signature/i);
    const job = await sql(db.url, `select data from pgboss.job where name = $1 and data->>'eventId' = $2`, [
      EVENTS_QUEUE,
      delivery.key,
    ]);
    expect(job.rows[0]).toEqual({ data: { provider: delivery.provider, eventId: delivery.key } });
  });

  it('event already recorded: 200 duplicate, nothing more recorded', async () => {
    const delivery = provider.make();
    expect((await send(t.app, delivery)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const response = await send(t.app, delivery);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'duplicate', id: delivery.key });
    }
    expect(await recorded(db.url, { provider: delivery.provider, eventId: delivery.key })).toEqual({
      events: 1,
      jobs: 1,
    });
  });

  it('signature header absent: 400 missing_signature', async () => {
    await expectRefused(provider.make({ signature: null }), 400, 'missing_signature');
  });

  it('no signature matches any configured secret: 400 invalid_signature', async () => {
    const wrong =
      provider === providers[SW_NAME] ? `whsec_${Buffer.from('another key').toString('base64')}` : 'wrong';
    await expectRefused(provider.make({ secret: wrong }), 400, 'invalid_signature');
    // Tampered body, signature of the original.
    const delivery = provider.make();
    await expectRefused({ ...delivery, body: delivery.body.replace(/.$/, ' }') }, 400, 'invalid_signature');
  });

  it('malformed signature headers are 400s, never 500s', async () => {
    const before = await recorded(db.url);
    const signatures = [
      '',
      ' ',
      'garbage',
      't=,v1=',
      't=abc,v1=zz',
      't=1,t=2',
      'v1,',
      'v1,@@@',
      ',,,,',
      '=',
      'x'.repeat(5000),
    ];
    for (const signature of signatures) {
      const response = await send(t.app, provider.make({ signature }));
      expect(response.status, `signature ${JSON.stringify(signature.slice(0, 20))}`).toBe(400);
    }
    expect(await recorded(db.url)).toEqual(before);
  });

  it('body not valid JSON, or no event id: 400 invalid_payload', async () => {
    await expectRefused(provider.make({ body: '{"id": "evt_broken", ' }), 400, 'invalid_payload');
    if (provider !== providers.shopify) {
      // Stripe needs `id`; a Standard Webhooks body must at least be a JSON object.
      await expectRefused(provider.make({ body: '[1,2,3]' }), 400, 'invalid_payload');
    }
  });

  it('body larger than the limit: 413 payload_too_large (declared, and streamed without a length)', async () => {
    const big = provider.make({ body: JSON.stringify({ id: 'evt_big', type: 'x', pad: 'x'.repeat(LIMIT) }) });
    await expectRefused(big, 413, 'payload_too_large');
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 4 * LIMIT) return controller.close();
        sent += 16 * 1024;
        controller.enqueue(new Uint8Array(16 * 1024).fill(0x20));
      },
    });
    await expectRefused(provider.make(), 413, 'payload_too_large', {
      body: stream,
      duplex: 'half',
    });
    expect(sent).toBeLessThan(2 * LIMIT);
  });

  if (provider.timestamped)
    it('signed timestamp outside tolerance: 400 timestamp_out_of_tolerance', async () => {
      const now = Math.floor(Date.now() / 1000);
      // A few seconds past the 300 s tolerance: a second ticking over mid-test cannot bring it back inside.
      await expectRefused(provider.make({ timestamp: now - 305 }), 400, 'timestamp_out_of_tolerance');
      await expectRefused(provider.make({ timestamp: now + 305 }), 400, 'timestamp_out_of_tolerance');
    });
});

describe('provider specifics', () => {
  it('stripe: any configured secret may match (rotation), and an event without an id is invalid_payload', async () => {
    const delivery = stripeDelivery({ secret: STRIPE_OLD_SECRET });
    expect(await (await send(t.app, delivery)).json()).toEqual({ status: 'accepted', id: delivery.key });
    await expectRefused(
      stripeDelivery({ body: '{"object":"event","type":"invoice.paid"}' }),
      400,
      'invalid_payload',
    );
  });

  it('stripe: headers are matched case-insensitively', async () => {
    const delivery = stripeDelivery();
    const headers = { 'STRIPE-SIGNATURE': delivery.headers['Stripe-Signature']! };
    expect((await send(t.app, { ...delivery, headers })).status).toBe(200);
  });

  it('shopify: a required header absent is 400 invalid_payload; the webhook id stands in for the event id', async () => {
    for (const header of ['X-Shopify-Topic', 'X-Shopify-Shop-Domain']) {
      await expectRefused(shopifyDelivery({ omit: [header] }), 400, 'invalid_payload');
    }
    await expectRefused(
      shopifyDelivery({ omit: ['X-Shopify-Event-Id', 'X-Shopify-Webhook-Id'] }),
      400,
      'invalid_payload',
    );
    const delivery = shopifyDelivery({ omit: ['X-Shopify-Event-Id'] });
    const webhookId = delivery.headers['X-Shopify-Webhook-Id']!;
    const response = await send(t.app, delivery);
    expect(await response.json()).toEqual({
      status: 'accepted',
      id: `dev-shop.myshopify.com:orders/create:${webhookId}`,
    });
  });

  it('a JSON body PostgreSQL cannot store (\\u0000) is 400 invalid_payload, nothing recorded', async () => {
    await expectRefused(
      stripeDelivery({ body: '{"id":"evt_nul","type":"x","object":"event","note":"a\\u0000b"}' }),
      400,
      'invalid_payload',
    );
  });
});

describe('routing', () => {
  it('unknown provider: 404 unknown_provider, body not read', async () => {
    await expectRefused({ ...stripeDelivery(), path: '/webhooks/paypal' }, 404, 'unknown_provider');
  });

  it('other routes: JSON 404', async () => {
    const response = await t.app.request('/nope');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('GET /healthz answers 200; on the management app /readyz answers 200 and /metrics counts requests by provider and outcome', async () => {
    expect((await t.app.request('/healthz')).status).toBe(200);
    expect((await t.management.request('/readyz')).status).toBe(200);
    const metrics = await (await t.management.request('/metrics')).text();
    expect(metrics).toMatch(/webhook_requests_total\{provider="stripe",outcome="accepted"\} \d+/);
    expect(metrics).toMatch(/webhook_requests_total\{provider="shopify",outcome="invalid_signature"\} \d+/);
    expect(metrics).toMatch(/webhook_requests_total\{provider="unknown",outcome="unknown_provider"\} \d+/);
    expect(metrics).toMatch(/webhook_ingest_duration_seconds_bucket\{le="0.005",outcome="duplicate"\} \d+/);
    expect(metrics).toMatch(/db_pool_connections\{state="idle"\} \d+/);
    expect(metrics).toMatch(/db_pool_connections\{state="waiting"\} 0/);
  });

  it('logs carry provider, key, outcome and latency, never secrets, signatures or payloads', async () => {
    const delivery = stripeDelivery();
    await send(t.app, delivery);
    await send(t.app, stripeDelivery({ secret: 'whsec_wrong' }));
    const lines = t.lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    const accepted = lines.find((line) => line.eventId === delivery.key);
    expect(accepted).toMatchObject({
      provider: 'stripe',
      outcome: 'accepted',
      type: 'checkout.session.completed',
    });
    expect(typeof accepted?.ms).toBe('number');
    expect(lines).toContainEqual(
      expect.objectContaining({ provider: 'stripe', code: 'invalid_signature', status: 400 }),
    );
    const all = t.lines().join('\n');
    expect(all).not.toContain(delivery.headers['Stripe-Signature']!.split('v1=')[1]);
    expect(all).not.toContain('whsec_');
    expect(all).not.toContain('cs_live_'); // from the payload
  });
});

describe('the database cannot record the event: 503 unavailable, nothing recorded', () => {
  it('enqueue fails inside the transaction: 503, and no event row either (atomic)', async () => {
    // Only in this test database: make every job insert for our queue raise, after the event row is inserted.
    await sql(
      db.url,
      `create function public.test_fail_job() returns trigger language plpgsql as $$
       begin raise exception 'job insert refused by test'; end $$`,
    );
    await sql(
      db.url,
      `create trigger test_fail_job before insert on pgboss.job for each row
       when (new.name = '${EVENTS_QUEUE}') execute function public.test_fail_job()`,
    );
    try {
      for (const delivery of [stripeDelivery(), shopifyDelivery(), standardDelivery()]) {
        await expectRefused(delivery, 503, 'unavailable');
        expect(await recorded(db.url, { provider: delivery.provider, eventId: delivery.key })).toEqual({
          events: 0,
          jobs: 0,
        });
      }
      // Duplicates of already-recorded events still answer (no job is sent for them).
      const known = stripeDelivery();
      await sql(db.url, 'drop trigger test_fail_job on pgboss.job');
      expect((await send(t.app, known)).status).toBe(200);
      await sql(
        db.url,
        `create trigger test_fail_job before insert on pgboss.job for each row
         when (new.name = '${EVENTS_QUEUE}') execute function public.test_fail_job()`,
      );
      expect(await (await send(t.app, known)).json()).toEqual({ status: 'duplicate', id: known.key });
    } finally {
      await sql(db.url, 'drop trigger if exists test_fail_job on pgboss.job');
    }
    // The receiver recovers with no restart: the connections that saw the failure were discarded.
    const delivery = stripeDelivery();
    expect(await (await send(t.app, delivery)).json()).toEqual({ status: 'accepted', id: delivery.key });
  });

  it('database unreachable: 503 unavailable; /readyz 503', async () => {
    const unreachable = await createTestApp(db.url, {
      poolUrl: 'postgres://postgres:postgres@127.0.0.1:1/none',
    });
    try {
      for (const delivery of [stripeDelivery(), shopifyDelivery(), standardDelivery()]) {
        const response = await send(unreachable.app, delivery);
        // The only retryable answer, and the only one that says when to retry.
        expect(response.headers.get('retry-after')).toBe('5');
        await expectError(response, 503, 'unavailable');
        expect(await recorded(db.url, { provider: delivery.provider, eventId: delivery.key })).toEqual({
          events: 0,
          jobs: 0,
        });
      }
      expect((await unreachable.management.request('/readyz')).status).toBe(503);
      expect((await unreachable.app.request('/healthz')).status).toBe(200);
    } finally {
      await unreachable.close();
    }
  });
});
