import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestDatabase } from '@webhook-inbox/testing';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '@webhook-inbox/inbox/ingest';
import { EVENTS_QUEUE } from '@webhook-inbox/inbox/queue';
import { recordEffectRoutes } from '@webhook-inbox/inbox/effect-routes';
import { reconcileStripe } from '../src/reconcile.ts';
import { openDeps, silentLogger, type OpsTestDeps } from './support/ops.ts';

const FIXTURES = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
];
FIXTURES.push('customer.subscription.deleted', 'invoice.paid');

/**
 * The Stripe types with a recorded effect (as the worker records them at its start), in the order reconciliation
 * asks for them: the example's `invoice.paid` and a type only a team's effect handles, `charge.refunded`.
 */
const HANDLED = [
  'charge.refunded',
  'checkout.session.completed',
  'customer.subscription.updated',
  'invoice.paid',
];

interface StripeEventJson {
  id: string;
  type: string;
  created: number;
  [key: string]: unknown;
}

interface FakeEvent {
  event: StripeEventJson;
  /** Whether Stripe considers every webhook delivery of it successful. */
  delivered: boolean;
}

const templates = FIXTURES.map(
  (type) =>
    JSON.parse(
      readFileSync(new URL(`../../../test/fixtures/stripe/${type}.json`, import.meta.url), 'utf8'),
    ) as StripeEventJson,
);
// Reconciliation reads only `id`, `type` and `created`: a refund is an invoice event renamed.
templates.push({ ...templates.at(-1)!, type: 'charge.refunded' });

/**
 * A fake of Stripe's `GET /v1/events` on 127.0.0.1, with the real API's filters (`created[gte|lt]`,
 * `delivery_success`, `types[n]`) and cursor pagination (`limit`, `starting_after`, `has_more`), newest first.
 */
async function startFakeStripe(events: FakeEvent[]) {
  const requests: Array<{ url: URL; authorization: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({ url, authorization: req.headers.authorization });
    const json = (status: number, body: unknown) =>
      res
        .writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake' })
        .end(JSON.stringify(body));
    if (req.method !== 'GET' || url.pathname !== '/v1/events') {
      json(404, {
        error: { type: 'invalid_request_error', message: `no route ${req.method} ${url.pathname}` },
      });
      return;
    }
    const q = url.searchParams;
    let list = [...events].sort(
      (a, b) => b.event.created - a.event.created || (a.event.id < b.event.id ? 1 : -1),
    );
    const gte = q.get('created[gte]');
    const lt = q.get('created[lt]');
    if (gte) list = list.filter((e) => e.event.created >= Number(gte));
    if (lt) list = list.filter((e) => e.event.created < Number(lt));
    const delivery = q.get('delivery_success');
    if (delivery !== null) list = list.filter((e) => e.delivered === (delivery === 'true'));
    const types = [...q.entries()].filter(([key]) => /^types\[\d+\]$/.test(key)).map(([, value]) => value);
    if (types.length > 0) list = list.filter((e) => types.includes(e.event.type));
    const after = q.get('starting_after');
    if (after) list = list.slice(list.findIndex((e) => e.event.id === after) + 1);
    const limit = Number(q.get('limit') ?? 10);
    json(200, {
      object: 'list',
      url: '/v1/events',
      has_more: list.length > limit,
      data: list.slice(0, limit).map((e) => e.event),
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const stripe = new Stripe('sk_test_reconcile_fake', {
    host: '127.0.0.1',
    port,
    protocol: 'http',
    maxNetworkRetries: 0,
  });
  return {
    stripe,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const db = useTestDatabase();
let deps: OpsTestDeps;
let fake: Awaited<ReturnType<typeof startFakeStripe>>;

const nowSec = Math.floor(Date.now() / 1000);
const since = new Date((nowSec - 3 * 86_400) * 1000);
const handled = new Set(HANDLED);

// 250 recent events from the five fixtures (distinct ids and times, 3 in 7 undelivered: two pages of them), and 10 older than
// `since` that must not be looked at.
const events: FakeEvent[] = [
  ...Array.from({ length: 250 }, (_, i) => ({
    event: {
      ...(templates[i % templates.length] as StripeEventJson),
      id: `evt_rc${String(i).padStart(4, '0')}`,
      created: nowSec - 2 * 86_400 + i * 60,
    },
    delivered: i % 7 >= 3,
  })),
  ...Array.from({ length: 10 }, (_, i) => ({
    event: {
      ...(templates[i % templates.length] as StripeEventJson),
      id: `evt_old${i}`,
      created: nowSec - 10 * 86_400 + i,
    },
    delivered: false,
  })),
];
const recent = events.filter((e) => e.event.created >= since.getTime() / 1000);
// What reconciliation must look at: anything undelivered, and every event of a handled type.
const expected = recent.filter((e) => !e.delivered || handled.has(e.event.type));
const undelivered = recent.filter((e) => !e.delivered);
// Recorded before reconciliation by ordinary deliveries: every third expected event, and one it never lists.
const prerecorded = [
  ...expected.filter((_, i) => i % 3 === 0),
  recent.find((e) => e.delivered && e.event.type === 'customer.subscription.deleted') as FakeEvent,
];
const expectedIds = new Set(expected.map((e) => e.event.id));
const prerecordedIds = new Set(prerecorded.map((e) => e.event.id));
const missingIds = [...expectedIds].filter((id) => !prerecordedIds.has(id)).sort();

async function snapshot() {
  const rows = await deps.pool.query(
    `select provider, event_id, type, p.payload::text as payload, headers, source, received_at, status, attempts
       from webhook_events e left join webhook_event_payloads p using (provider, event_id, received_at)
      order by event_id`,
  );
  const jobs = await deps.pool.query<{ id: string; n: number }>(
    `select data->>'eventId' as id, count(*)::int as n from pgboss.job where name = $1 group by 1 order by 1`,
    [EVENTS_QUEUE],
  );
  return { rows: rows.rows, jobs: Object.fromEntries(jobs.rows.map((r) => [r.id, r.n])) };
}

beforeAll(async () => {
  deps = await openDeps(db.url);
  fake = await startFakeStripe(events);
  await recordEffectRoutes(
    deps.pool,
    [
      ...HANDLED.map((eventType) => ({ eventType, effect: 'recordPayment' })),
      // Another effect of a handled type: the type is asked for once.
      { eventType: 'invoice.paid', effect: 'notifyFinance' },
      // Another provider's routes are not Stripe types.
      { provider: 'shopify', eventType: 'orders/create', effect: 'saveOrder' },
    ].map((route, position) => ({ provider: 'stripe', kind: 'database' as const, position, ...route })),
  );
});
afterAll(async () => {
  await fake?.close();
  await deps?.close();
});

describe('reconcileStripe', () => {
  it('dry run: counts what is missing and records nothing', async () => {
    const report = await reconcileStripe({
      ...deps,
      stripe: fake.stripe,
      since,
      logger: silentLogger,
      dryRun: true,
    });
    expect(report).toMatchObject({
      scanned: expected.length,
      missing: expected.length,
      ingested: 0,
      alreadyPresent: 0,
      dryRun: true,
    });
    expect(await snapshot()).toEqual({ rows: [], jobs: {} });
  });

  it('records each missing event once through ingest(), leaves present ones alone, and a second run changes nothing', async () => {
    for (const { event } of prerecorded) {
      await ingest(deps, {
        provider: 'stripe',
        eventId: event.id,
        type: event.type,
        payloadText: JSON.stringify(event),
        headers: {},
      });
    }
    // Some of them already processed by the worker: still untouched.
    await deps.pool.query(
      `update webhook_events set status = 'processed', attempts = 1, processed_at = now() where event_id like '%0'`,
    );
    const before = await snapshot();
    fake.requests.length = 0;

    const report = await reconcileStripe({ ...deps, stripe: fake.stripe, since, logger: silentLogger });
    const presentExpected = expected.filter((e) => prerecordedIds.has(e.event.id)).length;
    expect(report).toMatchObject({
      scanned: expected.length,
      missing: missingIds.length,
      ingested: missingIds.length,
      alreadyPresent: presentExpected,
      dryRun: false,
    });
    expect(missingIds.length).toBeGreaterThan(100);
    const invoices = expected.filter((e) => e.event.type === 'invoice.paid');
    expect(report.byType['invoice.paid']).toEqual({
      scanned: invoices.length,
      missing: invoices.filter((e) => !prerecordedIds.has(e.event.id)).length,
      ingested: invoices.filter((e) => !prerecordedIds.has(e.event.id)).length,
      alreadyPresent: invoices.filter((e) => prerecordedIds.has(e.event.id)).length,
    });

    const after = await snapshot();
    // Rows that existed are byte-for-byte as they were; the new ones are exactly the missing events.
    const previous = new Map(before.rows.map((r: { event_id: string }) => [r.event_id, r]));
    for (const row of after.rows as Array<{ event_id: string; source: string }>) {
      if (previous.has(row.event_id)) expect(row).toEqual(previous.get(row.event_id));
      else expect(row.source).toBe('reconciled');
    }
    const reconciled = (after.rows as Array<{ event_id: string; source: string }>)
      .filter((r) => r.source === 'reconciled')
      .map((r) => r.event_id)
      .sort();
    expect(reconciled).toEqual(missingIds);
    // One job per event: the pre-recorded ones kept their single job, each missing one got one.
    expect(after.jobs).toEqual(
      Object.fromEntries([...prerecordedIds, ...missingIds].sort().map((id) => [id, 1])),
    );
    // The payload is the event as the API returned it.
    const sample = await deps.pool.query<{
      payload: unknown;
      type: string;
      status: string;
      headers: unknown;
    }>(
      `select p.payload, type, status, headers
         from webhook_events e join webhook_event_payloads p using (provider, event_id, received_at)
        where event_id = $1`,
      [missingIds[0]],
    );
    const served = events.find((e) => e.event.id === missingIds[0])?.event;
    expect(sample.rows[0]).toEqual({ payload: served, type: served?.type, status: 'received', headers: {} });

    // What the SDK asked Stripe for.
    expect(fake.requests.every((r) => r.authorization === 'Bearer sk_test_reconcile_fake')).toBe(true);
    const params = fake.requests.map((r) => Object.fromEntries(r.url.searchParams));
    const gte = String(Math.floor(since.getTime() / 1000));
    const undeliveredCalls = params.filter((p) => p.delivery_success === 'false');
    const typedCalls = params.filter((p) => p['types[0]'] !== undefined);
    expect(undeliveredCalls.length + typedCalls.length).toBe(params.length);
    expect(undeliveredCalls).toHaveLength(Math.ceil(undelivered.length / 100));
    expect(undeliveredCalls[0]).toEqual({ 'created[gte]': gte, delivery_success: 'false', limit: '100' });
    const handledOfRecent = recent.filter((e) => handled.has(e.event.type));
    expect(typedCalls).toHaveLength(Math.ceil(handledOfRecent.length / 100));
    expect(typedCalls[0]).toEqual({
      'created[gte]': gte,
      limit: '100',
      ...Object.fromEntries(HANDLED.map((type, i) => [`types[${i}]`, type])),
    });
    // Pagination: each next page starts after the last event of the previous one (newest first).
    const newestFirst = [...handledOfRecent].sort((a, b) => b.event.created - a.event.created);
    expect(typedCalls[1]?.starting_after).toBe(newestFirst[99]?.event.id);
    const undeliveredNewestFirst = [...undelivered].sort((a, b) => b.event.created - a.event.created);
    expect(undeliveredCalls[1]?.starting_after).toBe(undeliveredNewestFirst[99]?.event.id);

    // Again: nothing new to record, nothing touched.
    const again = await reconcileStripe({ ...deps, stripe: fake.stripe, since, logger: silentLogger });
    expect(again).toMatchObject({
      scanned: expected.length,
      missing: 0,
      ingested: 0,
      alreadyPresent: expected.length,
    });
    expect(await snapshot()).toEqual(after);
  });

  it('refuses an empty window', async () => {
    await expect(
      reconcileStripe({ ...deps, stripe: fake.stripe, since, until: since, logger: silentLogger }),
    ).rejects.toThrow(/until must be later than since/);
  });
});
