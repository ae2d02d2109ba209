import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, send, sql, type TestApp } from './helpers.ts';
import {
  receiverEnv,
  shopifyDelivery,
  spawnReceiver,
  stripeDelivery,
} from '@webhook-inbox/scenarios/receiver';

// The admin API on the real app: list with filters and a cursor, show, replay; bearer auth; off when unset.

const db = useTestDatabase();
const TOKEN = 'admin-token-for-tests-0123456789';
let t: TestApp;
let disabled: TestApp;

beforeAll(async () => {
  t = await createTestApp(db.url, { adminToken: TOKEN });
  disabled = await createTestApp(db.url);
});
afterAll(async () => {
  await t?.close();
  await disabled?.close();
});

const get = (path: string, token: string | undefined = TOKEN) =>
  Promise.resolve(t.app.request(path, { headers: token ? { authorization: `Bearer ${token}` } : {} }));
const post = (path: string, body?: unknown) =>
  Promise.resolve(
    t.app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

/** The answer is `status` with `{"error":{"code","message"}}`, and logged as a refusal without a stack. */
async function expectError(response: Response, status: number, code: string): Promise<void> {
  const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
  expect({ status: response.status, code: body.error?.code }, JSON.stringify(body)).toEqual({ status, code });
  expect(typeof body.error?.message).toBe('string');
}

/** Log lines written while `run` ran. */
async function logged(app: TestApp, run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const before = app.lines().length;
  await run();
  return app
    .lines()
    .slice(before)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('admin API', () => {
  it('refuses a missing or wrong token with 401, and does not exist without ADMIN_TOKEN', async () => {
    await expectError(await get('/admin/events', ''), 401, 'unauthorized');
    const wrong = await get('/admin/events', 'admin-token-for-tests-WRONG00000');
    await expectError(wrong, 401, 'unauthorized');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const basic = await t.app.request('/admin/events', { headers: { authorization: `Basic ${TOKEN}` } });
    await expectError(basic, 400, 'invalid_request');
    const off = await disabled.app.request('/admin/events', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await expectError(off, 404, 'not_found');
  });

  it('lists with filters and pages with a cursor', async () => {
    for (let i = 0; i < 5; i++) {
      const id = `evt_admin_${i}`;
      const type = i % 2 ? 'customer.subscription.updated' : 'checkout.session.completed';
      const body = JSON.stringify({
        id,
        object: 'event',
        type,
        created: 1_700_000_000,
        data: { object: {} },
      });
      const delivery = stripeDelivery({ id, body });
      expect((await send(t.app, delivery)).status).toBe(200);
    }
    const filtered = await get('/admin/events?provider=stripe&type=customer.subscription.updated&since=1h');
    expect(filtered.status).toBe(200);
    const page = (await filtered.json()) as { events: { eventId: string; status: string }[] };
    expect(page.events.map((e) => e.eventId).sort()).toEqual(['evt_admin_1', 'evt_admin_3']);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await get(`/admin/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      const body = (await response.json()) as { events: { eventId: string }[]; nextCursor: string | null };
      seen.push(...body.events.map((e) => e.eventId));
      cursor = body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(['evt_admin_0', 'evt_admin_4']));

    expect((await get('/admin/events?status=bogus')).status).toBe(400);
    expect((await get('/admin/events?since=yesterday')).status).toBe(400);
    expect((await get('/admin/events?limit=100000')).status).toBe(400);
  });

  it('shows one event with its effects, Shopify keys with slashes included', async () => {
    const shown = await get('/admin/events/stripe/evt_admin_0');
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({
      eventId: 'evt_admin_0',
      type: 'checkout.session.completed',
      effects: [],
    });

    const delivery = shopifyDelivery({ eventId: 'admin-shop-event' });
    expect((await send(t.app, delivery)).status).toBe(200);
    const eventId = delivery.key;
    expect(eventId).toContain('/');
    for (const path of [
      `/admin/events/shopify/${encodeURIComponent(eventId)}`,
      `/admin/events/shopify/${eventId}`,
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      const body = (await response.json()) as { eventId: string; payload: { id: unknown } };
      expect(body.eventId).toBe(eventId);
      // Order ids above 2^53 come back with every digit.
      expect(String(body.payload.id)).toMatch(/^\d{16,}$/);
    }
    expect((await get('/admin/events/stripe/evt_missing')).status).toBe(404);
  });

  it("shows an event's attempt history, oldest first", async () => {
    await t.pool.query(
      `insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms,
                                    outcome, error, worker, job_id)
       values ('stripe', 'evt_admin_0', 'sendWelcomeEmail', 1, now() - interval '1 minute', now() - interval '1 minute',
               12, 'failed', 'connect ECONNREFUSED 127.0.0.1:1025 (ECONNREFUSED)', 'worker-a/41', 'job-1'),
              ('stripe', 'evt_admin_0', 'sendWelcomeEmail', 2, now(), now(), 30, 'completed', null, 'worker-b/42', 'job-1')`,
    );
    const shown = (await (await get('/admin/events/stripe/evt_admin_0')).json()) as {
      attemptHistory: Record<string, unknown>[];
    };
    expect(shown.attemptHistory).toMatchObject([
      {
        effect: 'sendWelcomeEmail',
        attempt: 1,
        outcome: 'failed',
        durationMs: 12,
        worker: 'worker-a/41',
        jobId: 'job-1',
      },
      { effect: 'sendWelcomeEmail', attempt: 2, outcome: 'completed', error: null, worker: 'worker-b/42' },
    ]);
    expect(shown.attemptHistory[0]?.error).toBe('connect ECONNREFUSED 127.0.0.1:1025 (ECONNREFUSED)');
  });

  it('replays through the queue: a new job in pg-boss, status back to received', async () => {
    const jobs = async () =>
      (await sql(db.url, `select count(*)::int as n from pgboss.job where data->>'eventId' = 'evt_admin_2'`))
        .rows[0] as { n: number };
    const before = await jobs();
    const response = await post('/admin/events/stripe/evt_admin_2/replay');
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ eventId: 'evt_admin_2', enqueued: true, effects: null });
    expect((await jobs()).n).toBe(before.n + 1);
    const status = await sql(db.url, `select status from webhook_events where event_id = 'evt_admin_2'`);
    expect(status.rows).toEqual([{ status: 'received' }]);

    expect((await post('/admin/events/stripe/evt_missing/replay')).status).toBe(404);
    const force = await post('/admin/events/stripe/evt_admin_2/replay', { forceEffect: 'neverCompleted' });
    expect(force.status).toBe(400);
    expect(await force.json()).toMatchObject({ error: { code: 'unknown_effect' } });

    // Once a worker has recorded its effects (effect_routes), the replay names them, as the CLI's does.
    await sql(
      db.url,
      `insert into effect_routes (provider, event_type, effect, kind, position)
       values ('stripe', 'checkout.session.completed', 'provisionAccount', 'database', 0),
              ('stripe', 'checkout.session.completed', 'sendWelcomeEmail', 'external', 1)`,
    );
    try {
      const named = await post('/admin/events/stripe/evt_admin_2/replay');
      expect(await named.json()).toMatchObject({
        effects: ['provisionAccount', 'sendWelcomeEmail'],
        enqueued: true,
      });
      const unregistered = await post('/admin/events/stripe/evt_admin_2/replay', { forceEffect: 'nope' });
      expect(unregistered.status).toBe(400);
      const refusal = (await unregistered.json()) as { error: { code: string; message: string } };
      expect(refusal.error.code).toBe('unknown_effect');
      expect(refusal.error.message).toContain('registered: provisionAccount, sendWelcomeEmail');
    } finally {
      await sql(db.url, 'delete from effect_routes');
    }
  });

  it("replays for a consumer group: that group's effects, its queue, its row created when it never had the event", async () => {
    const refused = await post('/admin/events/stripe/evt_admin_2/replay', { group: 'billing' });
    await expectError(refused, 400, 'invalid_request');
    await expectError(
      await post('/admin/events/stripe/evt_admin_2/replay', { group: 'Not A Group' }),
      400,
      'invalid_request',
    );
    await sql(
      db.url,
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', 'checkout.session.completed', 'recordRevenue', 'database', 0, 'billing')`,
    );
    try {
      const response = await post('/admin/events/stripe/evt_admin_2/replay', { group: 'billing' });
      expect(response.status).toBe(202);
      expect(await response.json()).toMatchObject({
        group: 'billing',
        previousStatus: 'none',
        effects: ['recordRevenue'],
        enqueued: true,
      });
      const row = await sql(
        db.url,
        `select consumer_group, status from webhook_event_groups where event_id = 'evt_admin_2'`,
      );
      expect(row.rows).toEqual([{ consumer_group: 'billing', status: 'received' }]);
      const job = await sql(
        db.url,
        `select count(*)::int as n from pgboss.job
          where name = 'webhook-events.billing' and data->>'eventId' = 'evt_admin_2'`,
      );
      expect(job.rows).toEqual([{ n: 1 }]);
      const shown = (await (await get('/admin/events/stripe/evt_admin_2')).json()) as { groups: unknown };
      expect(shown.groups).toMatchObject([{ group: 'billing', status: 'received', attempts: 0 }]);
    } finally {
      await sql(db.url, 'delete from effect_routes');
    }
  });

  it('refuses every malformed parameter with 400 and a stable code, logged without a stack', async () => {
    // An app of its own: refusals are logged once per kind and window, and the other tests' came first.
    const shared = t;
    t = await createTestApp(db.url, { adminToken: TOKEN });
    const lines = await logged(t, async () => {
      const filters = [
        'cursor=not%20base64!',
        `cursor=${base64url('garbage')}`,
        `cursor=${base64url(['not-a-date', 'stripe', 'evt_1'])}`,
        `cursor=${base64url(['2026-02-30T00:00:00.000000Z', 'stripe', 'evt_1'])}`,
        `cursor=${base64url(['2026-01-01T00:00:00.000000Z', 'str\u0000ipe', 'evt_1'])}`,
        'provider=%00',
        'provider=Stripe!',
        'type=a%00b',
        `type=${'t'.repeat(300)}`,
        'status=bogus',
        'since=99999999999999999999w',
        'since=9999999w',
        'since=2026-13-45',
        'since=yesterday',
        'limit=0',
        'limit=501',
        'limit=1e2',
        'limit=abc',
        'statuss=dead',
      ];
      for (const query of filters) {
        const response = await get(`/admin/events?${query}`);
        await expectError(response, 400, 'invalid_filter');
      }
      const since = await get('/admin/events?since=99999999999999999999w');
      expect(((await since.json()) as { error: { message: string } }).error.message).toMatch(
        /longer than any date/,
      );

      for (const path of [
        '/admin/events/%00/evt_1',
        '/admin/events/stripe/evt%00x',
        '/admin/events/stripe/%E0%A4%A',
      ]) {
        await expectError(await get(path), 400, 'invalid_request');
        await expectError(await post(`${path}/replay`), 400, 'invalid_request');
      }
      const bad = (body: string) =>
        t.app.request('/admin/events/stripe/evt_admin_2/replay', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body,
        });
      await expectError(await bad('{not json'), 400, 'invalid_request');
      await expectError(await bad('{"forceEffect":42}'), 400, 'invalid_request');
      await expectError(await bad('{"forceEffect":"x","dryRun":true}'), 400, 'invalid_request');
      await expectError(await bad('[]'), 400, 'invalid_request');
    });
    await t.close();
    t = shared;
    expect(lines.map((line) => line.code)).toEqual(['invalid_filter', 'invalid_request']);
    for (const line of lines) {
      expect(line, JSON.stringify(line)).toMatchObject({ level: 40, msg: 'admin request refused' });
      expect(JSON.stringify(line)).not.toMatch(/stack|\bat \w+ \(/);
    }
  });
});

describe('admin API over HTTP', () => {
  it('refuses a 100 MB replay body with 413 long before it is sent, declared or streamed', async () => {
    const receiver = await spawnReceiver(receiverEnv(db.url, { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'warn' }));
    try {
      // The admin API is served on the management listener.
      const url = new URL('/admin/events/stripe/evt_admin_2/replay', receiver.managementUrl);
      const hundredMb = 100 * 1024 * 1024;
      for (const declared of [true, false]) {
        let sent = 0;
        const chunk = new Uint8Array(64 * 1024).fill(0x20);
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= hundredMb) return controller.close();
            sent += chunk.length;
            controller.enqueue(chunk);
          },
        });
        const headers: Record<string, string> = {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
        };
        if (declared) headers['content-length'] = String(hundredMb);
        const response = await fetch(url, {
          method: 'POST',
          headers,
          body,
          duplex: 'half',
          signal: AbortSignal.timeout(20_000),
        });
        await expectError(response, 413, 'payload_too_large');
        expect(sent, `declared ${declared}`).toBeLessThan(hundredMb / 4);
      }
      // The first refusal of a kind is logged; the next ones are counted, the count logged at the window's end or
      // at shutdown.
      await waitFor(
        () =>
          receiver.output().match(/"code":"payload_too_large".*"msg":"admin request refused"/g)?.length === 1,
        {
          timeout: 5_000,
          message: 'the first refusal in the log',
        },
      );
      expect(receiver.output()).not.toMatch(/"stack"/);
      await receiver.stop();
      expect(receiver.output()).toMatch(/"kind":"admin request refused payload_too_large","suppressed":1\b/);
    } finally {
      await receiver.stop();
    }
  });
});
