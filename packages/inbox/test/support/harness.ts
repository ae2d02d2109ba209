/**
 * Shared by the effect tests: the producer with fast retries and the ledger queries the tests
 * assert on. Not a test file itself.
 */
import { createPool } from '@webhook-inbox/db';
import { TcpProxy } from '@webhook-inbox/testing';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { JobWithMetadata } from 'pg-boss';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { DatabaseEffectFn } from '../../src/effects/types.ts';
import type { Inbox, InboxStartOptions, InboxWorker } from '../../src/inbox.ts';
import { DEFAULT_QUEUE_SETTINGS, type EventJob, type QueueSettings } from '../../src/queue.ts';
import { startProducer as startInboxProducer, type Producer } from '../../src/testing.ts';

export type { Producer };

/** Retries fast enough for a test, still through pg-boss's retry machinery. */
export const FAST_RETRIES: QueueSettings = {
  ...DEFAULT_QUEUE_SETTINGS,
  retryLimit: 2,
  retryDelay: 0,
  retryBackoff: false,
  expireInSeconds: 30,
};

/** The inbox's test producer (`@webhook-inbox/inbox/testing`), with fast retries by default. */
export const startProducer = (pool: pg.Pool, url: string, settings = FAST_RETRIES) =>
  startInboxProducer(pool, url, settings);

/** A job as pg-boss hands it to the handler (`EffectRunner.runBatch`), for an event already recorded. */
export function job(eventId: string): JobWithMetadata<EventJob> {
  return {
    id: `job-${eventId}`,
    data: { provider: 'test', eventId },
    retryCount: 0,
    retryLimit: 2,
    expireInSeconds: 60,
    startedOn: new Date(),
  } as unknown as JobWithMetadata<EventJob>;
}

export interface EffectRunRow {
  event_id: string;
  effect: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

export async function effectRuns(pool: pg.Pool, eventId: string): Promise<Record<string, EffectRunRow>> {
  const { rows } = await pool.query<EffectRunRow>(
    'select event_id, effect, status, attempts, last_error from effect_runs where event_id = $1',
    [eventId],
  );
  return Object.fromEntries(rows.map((row) => [row.effect, row]));
}

export async function eventRow(
  pool: pg.Pool,
  eventId: string,
): Promise<{ status: string; attempts: number; last_error: string | null } | undefined> {
  const { rows } = await pool.query<{ status: string; attempts: number; last_error: string | null }>(
    'select status, attempts, last_error from webhook_events where event_id = $1',
    [eventId],
  );
  return rows[0];
}

/** A table with no unique constraint: every committed run of a database effect adds a row, duplicates included. */
export async function createEffectLog(pool: pg.Pool): Promise<void> {
  await pool.query('create table if not exists effect_log (event_id text not null, effect text not null)');
}

/** A database effect with a visible, non-idempotent trace: one effect_log row per committed run. */
export const logged =
  (name: string): DatabaseEffectFn<{ eventId: string }> =>
  async ({ event, tx }) => {
    await tx.execute(sql`insert into effect_log (event_id, effect) values (${event.eventId}, ${name})`);
  };

export interface WorkerHarness {
  readonly pool: pg.Pool;
  readonly producer: Producer;
  /** Starts a worker on the file's database with fast retries; it is stopped after the test. */
  start(inbox: Inbox, options?: Partial<InboxStartOptions>): Promise<InboxWorker>;
}

/**
 * A test file's pool, effect log and producer (created before its tests, closed after them), and the workers its
 * tests start (stopped after each test).
 */
export function useWorkerHarness(url: () => string): WorkerHarness {
  let pool: pg.Pool | undefined;
  let producer: Producer | undefined;
  const workers: InboxWorker[] = [];
  beforeAll(async () => {
    // Tests send hundreds of events at once through these five connections on a shared two-core machine: a
    // checkout may queue for seconds, which is load, not a failure (each test waits with its own deadline).
    pool = createPool({ connectionString: url(), max: 5, connectionTimeoutMillis: 60_000 });
    await createEffectLog(pool);
    producer = await startProducer(pool, url());
  });
  // Each test starts with no job left by the one before: an event whose job was still pending when its test
  // stopped would otherwise run in the next test's worker, with that test's effects (or fan out to its
  // destinations). pg-boss deletes them, every queue's, whatever their state.
  beforeEach(async () => {
    await ready(producer).boss.deleteAllJobs();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ timeoutMs: 5_000 })));
  });
  afterAll(async () => {
    await producer?.stop();
    await pool?.end();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the worker harness is used before its beforeAll ran');
    return value;
  };
  return {
    get pool() {
      return ready(pool);
    },
    get producer() {
      return ready(producer);
    },
    async start(inbox, options = {}) {
      const worker = await inbox.start({
        connectionString: url(),
        queue: FAST_RETRIES,
        pollingIntervalSeconds: 0.5,
        poolSize: 8,
        ...options,
      });
      workers.push(worker);
      return worker;
    },
  };
}

export interface ProxiedWorkerHarness extends WorkerHarness {
  /** The TCP proxy between the workers and PostgreSQL, for the test to cut; restored after each test. */
  readonly proxy: TcpProxy;
}

/**
 * {@link useWorkerHarness} with a TCP proxy in front of the database: `start` connects workers through it unless
 * the options name another `connectionString`; the producer and `pool` connect directly.
 */
export function useProxiedWorkerHarness(url: () => string): ProxiedWorkerHarness {
  const harness = useWorkerHarness(url);
  let proxy: TcpProxy | undefined;
  beforeAll(async () => {
    proxy = await TcpProxy.start(url());
  });
  // Registered after the harness's hooks, so it runs before them: the workers stop with the database reachable.
  afterEach(async () => {
    await proxy?.restore();
  });
  afterAll(async () => {
    await proxy?.close();
  });
  const ready = (): TcpProxy => {
    if (proxy === undefined) throw new Error('the proxied harness is used before its beforeAll ran');
    return proxy;
  };
  return {
    get pool() {
      return harness.pool;
    },
    get producer() {
      return harness.producer;
    },
    get proxy() {
      return ready();
    },
    start: (inbox, options = {}) =>
      harness.start(inbox, { connectionString: ready().url(url()), ...options }),
  };
}
