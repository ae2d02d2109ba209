import { EVENTS_QUEUE } from '@webhook-inbox/inbox';
import { useTestDatabase, waitFor, TcpProxy } from '@webhook-inbox/testing';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { batchCounts, sql } from './helpers.ts';
import {
  getStatus,
  post,
  receiverEnv,
  stripeDelivery,
  type Delivery,
} from '@webhook-inbox/scenarios/receiver';

// The database goes away while deliveries are flowing. Whatever happens, no 2xx for an event that is not
// committed (with its job), failures are 503s, and the receiver recovers by itself once the database is back.

const db = useTestDatabase();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Result {
  delivery: Delivery;
  status: number;
  outcome?: string;
  at: number;
  ms: number;
}

/** `workers` loops, each posting new events back to back (own TCP connection each) until stopped. */
function load(url: string, workers = 6) {
  const results: Result[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const delivery = stripeDelivery();
      const started = Date.now();
      try {
        const response = await post(url, delivery);
        const outcome =
          response.status === 200 ? (JSON.parse(response.body) as { status: string }).status : undefined;
        results.push({
          delivery,
          status: response.status,
          outcome,
          at: Date.now(),
          ms: Date.now() - started,
        });
      } catch {
        results.push({ delivery, status: 0, at: Date.now(), ms: Date.now() - started });
      }
    }
  });
  return {
    results,
    since: (t: number) => results.filter((r) => r.at > t),
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return results;
    },
  };
}

async function start(databaseUrl: string, extra: Record<string, string> = {}): Promise<Receiver> {
  const receiver = await startReceiver(
    parseConfig({ ...receiverEnv(databaseUrl), PORT: '0', DATABASE_TIMEOUT_MS: '1000', ...extra }),
    { logger: pino({ level: 'silent' }) },
  );
  cleanups.push(() => receiver.close());
  return receiver;
}

/** Every 200 was committed with its job; every event row has exactly one job; nothing but 200s and 503s. */
async function expectConsistent(results: Result[]): Promise<void> {
  expect(results.filter((r) => r.status !== 200 && r.status !== 503)).toEqual([]);
  const accepted = results.filter((r) => r.status === 200).map((r) => r.delivery.key);
  const { rows } = await sql(
    db.url,
    `select e.event_id, (select count(*)::int from pgboss.job j
                          where j.name = $1 and j.data->>'provider' = e.provider and j.data->>'eventId' = e.event_id) as jobs
       from webhook_events e`,
    [EVENTS_QUEUE],
  );
  const recorded = new Map(
    (rows as Array<{ event_id: string; jobs: number }>).map((r) => [r.event_id, r.jobs]),
  );
  expect(accepted.filter((key) => !recorded.has(key))).toEqual([]);
  expect([...recorded.values()].filter((jobs) => jobs !== 1)).toEqual([]);
  const orphanJobs = await sql(
    db.url,
    `select count(*)::int as n from pgboss.job j where j.name = $1 and not exists
       (select 1 from webhook_events e where e.provider = j.data->>'provider' and e.event_id = j.data->>'eventId')`,
    [EVENTS_QUEUE],
  );
  expect(orphanJobs.rows[0]).toEqual({ n: 0 });
}

/** Ends every session of the receiver's request pool (what it was doing fails, the pool reconnects). */
async function killReceiverSessions(): Promise<void> {
  await sql(
    db.url,
    `select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = 'webhook-inbox-receiver' and datname = current_database()`,
  );
}

describe('the database goes away mid-run', () => {
  it("pg_terminate_backend of the receiver's connections: 503s for what was cut, then 200s again", async () => {
    const receiver = await start(db.url);
    const traffic = load(receiver.url);
    await waitFor(() => traffic.results.filter((r) => r.status === 200).length >= 20, { timeout: 60_000 });
    // Keep killing the receiver's sessions until some in-flight request has been caught by it.
    await waitFor(
      async () => {
        await killReceiverSessions();
        return traffic.results.some((r) => r.status === 503);
      },
      { timeout: 20_000, interval: 50, message: 'a request caught by a terminated session (503)' },
    );
    const healed = Date.now();
    await waitFor(() => traffic.since(healed).filter((r) => r.status === 200).length >= 20, {
      timeout: 60_000,
    });
    await expectConsistent(await traffic.stop());
  });

  it('sessions killed while group-commit transactions hold several requests: 503 to each of them, no 2xx', async () => {
    // One transaction at a time and twelve senders: requests queue up behind it and go together.
    const receiver = await start(db.url, { GROUP_COMMIT_TRANSACTIONS: '1' });
    const traffic = load(receiver.url, 12);
    await waitFor(async () => (await batchCounts(receiver.managementUrl)).committed.multi >= 5, {
      timeout: 60_000,
      message: 'committed transactions of several requests',
    });
    // Keep killing the receiver's sessions until a transaction of several requests has been caught by it.
    await waitFor(
      async () => {
        await killReceiverSessions();
        return (await batchCounts(receiver.managementUrl)).failed.multi > 0;
      },
      { timeout: 30_000, interval: 20, message: 'a transaction of several requests killed mid-way' },
    );
    const healed = Date.now();
    await waitFor(() => traffic.since(healed).filter((r) => r.status === 200).length >= 20, {
      timeout: 60_000,
    });
    const results = await traffic.stop();
    expect(results.filter((r) => r.status === 503).length).toBeGreaterThan(1);
    await expectConsistent(results);
  });

  it('TCP to the database cut: 503s and /readyz 503 while it is down; recovers without a restart', async () => {
    const proxy = await TcpProxy.start(db.url);
    cleanups.push(() => proxy.close());
    const receiver = await start(proxy.url(db.url));
    const traffic = load(receiver.url);
    await waitFor(() => traffic.results.filter((r) => r.status === 200).length >= 20, { timeout: 60_000 });

    await proxy.cut();
    const cut = Date.now();
    await waitFor(() => traffic.since(cut).filter((r) => r.status === 503).length >= 10, { timeout: 60_000 });
    expect(await getStatus(receiver.managementUrl, '/readyz')).toBe(503);
    expect(await getStatus(receiver.url, '/healthz')).toBe(200);

    await proxy.restore();
    const restored = Date.now();
    await waitFor(() => traffic.since(restored).filter((r) => r.status === 200).length >= 20, {
      timeout: 60_000,
    });
    // Readiness is asked of the database at most once a second: the last failure may be reused that long.
    await waitFor(async () => (await getStatus(receiver.managementUrl, '/readyz')) === 200, {
      timeout: 5_000,
      message: '/readyz to answer 200 again',
    });
    await expectConsistent(await traffic.stop());
  });

  it('database stops answering (black hole): 503 within the deadline instead of hanging; recovers', async () => {
    const proxy = await TcpProxy.start(db.url);
    cleanups.push(() => proxy.close());
    const receiver = await start(proxy.url(db.url));
    const traffic = load(receiver.url, 4);
    await waitFor(() => traffic.results.filter((r) => r.status === 200).length >= 20, { timeout: 60_000 });

    proxy.blackhole();
    const holed = Date.now();
    await waitFor(() => traffic.since(holed).filter((r) => r.status === 503).length >= 4, {
      timeout: 60_000,
    });
    // DATABASE_TIMEOUT_MS is 1 s: nobody waited much longer than that (a query, or a checkout) for an answer.
    const slowest = Math.max(...traffic.since(holed).map((r) => r.ms));
    expect(slowest).toBeLessThan(3_000);
    await proxy.cut();
    await proxy.restore();
    const restored = Date.now();
    await waitFor(() => traffic.since(restored).filter((r) => r.status === 200).length >= 20, {
      timeout: 60_000,
    });
    await expectConsistent(await traffic.stop());
  });
});
