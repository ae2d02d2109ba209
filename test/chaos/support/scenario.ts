/**
 * The frame the chaos scenarios share: a pool on the scenario's database with the statement audit installed, an
 * SMTP sink, a producer that records events as the receiver does (when the scenario loads the queue directly),
 * every process the scenario starts, and one teardown for all of it. Then the waits and checks they end with.
 */
import { createPool } from '@webhook-inbox/db';
import { startPgBouncer, type PgBouncer } from '@webhook-inbox/testing/pgbouncer';
import { migrateExampleDatabase } from '@webhook-inbox/worker/migrations';
import type pg from 'pg';
import { expect } from 'vitest';
import type { QueueSettings } from '../../../packages/inbox/src/queue.ts';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import {
  crashLines,
  killAll,
  report,
  startReceiver,
  startWorker,
  waitForOrExplain,
  workerEnv,
  type SpawnedReceiver,
  type WorkerProcess,
} from './cluster.ts';
import { accountsOf, type ChaosEvent } from './events.ts';
import { installAudit, processedCount, snapshot, sumEffects, type Snapshot } from './invariants.ts';
import { queueDrained, startProducer, type Producer } from '@webhook-inbox/scenarios/worker';

export interface ScenarioOptions {
  /** The scenario's database: a migrated test database, or one to `migrate`. */
  databaseUrl: string;
  /** Migrate the database first (a server of the scenario's own; test databases are clones of a migrated one). */
  migrate?: boolean;
  /** Connections of the test's own pool. Default 4. */
  poolSize?: number;
  /** How long the SMTP sink takes to accept each message. Default: at once. */
  smtpDelayMs?: () => number;
  /** What each message's acknowledgement also waits for (the scenario holds sends in flight), by client port. */
  smtpHold?: (clientPort: number) => Promise<void>;
  /** A producer that records events straight into the queue with this retry policy (no receiver in between). */
  producerQueue?: QueueSettings;
  /** Runs last in `stop()` (and if the start fails): what the scenario set up around the database. */
  afterStop?: () => Promise<void>;
  /**
   * `transaction`: the receivers and workers reach the database through PgBouncer in transaction mode, with
   * `DATABASE_POOLER=transaction` (the test's own pool stays direct: it is the observer). Default: the
   * `CHAOS_POOLER` environment variable, else none.
   */
  pooler?: 'none' | 'transaction';
}

/** The pooler the chaos suite runs its scenarios behind (`CHAOS_POOLER=transaction pnpm test:chaos ...`). */
export function chaosPooler(): 'none' | 'transaction' {
  const value = process.env.CHAOS_POOLER?.trim();
  if (!value || value === 'none') return 'none';
  if (value === 'transaction') return 'transaction';
  throw new Error(`CHAOS_POOLER must be none or transaction, not ${value}`);
}

export interface Scenario {
  readonly pool: pg.Pool;
  /** The database URL the scenario's processes get: through PgBouncer when it runs behind one. */
  readonly processDatabaseUrl: string;
  readonly smtp: SmtpSink;
  /** The producer; only with `producerQueue`. */
  readonly producer: Producer;
  /** Every process started through the scenario, alive or not: all are killed by `stop()`. */
  readonly processes: Array<WorkerProcess | SpawnedReceiver>;
  /** `workerEnv` for the scenario's database and SMTP sink; `extra` wins (a `DATABASE_URL` through a proxy). */
  workerEnv(extra?: Record<string, string>): Record<string, string>;
  /** Starts a worker (the scenario's `workerEnv()` by default) and adds it to `processes`. */
  startWorker(env?: Record<string, string>): Promise<WorkerProcess>;
  /** Starts a receiver and adds it to `processes`. */
  startReceiver(env: Record<string, string>): Promise<SpawnedReceiver>;
  /**
   * Waits until `count` events are processed and the queue has nothing left to do; on timeout, fails with a
   * snapshot of the database and the end of every process's output.
   */
  waitForProcessed(count: number, options: { timeout: number; message: string }): Promise<void>;
  /** Kills every process, then stops the producer, the SMTP sink and the pool, then runs `afterStop`. */
  stop(): Promise<void>;
}

export async function startScenario(options: ScenarioOptions): Promise<Scenario> {
  const pool = createPool({
    connectionString: options.databaseUrl,
    max: options.poolSize ?? 4,
    // The producer sends 50 events at a time over these few connections: on a loaded machine a send can wait
    // long for one, and the test's stand-in for the receiver must not fail where a sender would just retry.
    connectionTimeoutMillis: 60_000,
  });
  const processes: Array<WorkerProcess | SpawnedReceiver> = [];
  let smtp: SmtpSink | undefined;
  let producer: Producer | undefined;
  let bouncer: PgBouncer | undefined;
  const stop = async () => {
    await killAll(processes);
    await producer?.stop();
    await smtp?.close();
    await pool.end();
    await bouncer?.stop();
    await options.afterStop?.();
  };
  try {
    if ((options.pooler ?? chaosPooler()) === 'transaction') {
      bouncer = await startPgBouncer({ serverUrl: options.databaseUrl });
    }
    if (options.migrate) await migrateExampleDatabase(options.databaseUrl);
    smtp = await startSmtpSink({ delayMs: options.smtpDelayMs, hold: options.smtpHold });
    if (options.producerQueue) {
      producer = await startProducer(pool, options.databaseUrl, options.producerQueue);
    }
    await installAudit(pool);
  } catch (error) {
    await stop();
    throw error;
  }
  const sink = smtp;
  // A process given the scenario's database goes through the pooler, if there is one; one given another URL
  // (a proxy of the scenario's own) keeps it.
  const pooled = bouncer;
  let pooledProcesses = 0;
  const throughPooler = (processEnv: Record<string, string>): Record<string, string> => {
    if (!pooled || processEnv.DATABASE_URL !== options.databaseUrl) return processEnv;
    report('pooler', {
      process: ++pooledProcesses,
      through: `PgBouncer :${pooled.port}`,
      mode: 'transaction',
    });
    return { ...processEnv, DATABASE_URL: pooled.url(options.databaseUrl), DATABASE_POOLER: 'transaction' };
  };
  const env = (extra: Record<string, string> = {}) => workerEnv(options.databaseUrl, sink.url, extra);
  const started = async <P extends WorkerProcess | SpawnedReceiver>(process: Promise<P>): Promise<P> => {
    const p = await process;
    processes.push(p);
    return p;
  };
  return {
    pool,
    processDatabaseUrl: pooled?.url(options.databaseUrl) ?? options.databaseUrl,
    smtp: sink,
    get producer(): Producer {
      if (!producer) throw new Error('this scenario has no producer: pass producerQueue');
      return producer;
    },
    processes,
    workerEnv: env,
    startWorker: (workerEnvironment = env()) => started(startWorker(throughPooler(workerEnvironment))),
    startReceiver: (receiverEnv) => started(startReceiver(throughPooler(receiverEnv))),
    waitForProcessed: async (count, { timeout, message }) => {
      await waitForOrExplain(
        async () => (await processedCount(pool)) === count && queueDrained(pool),
        { timeout, interval: 200, message },
        () => snapshot(pool),
        processes,
      );
    },
    stop,
  };
}

/** Starts a scenario, runs `body` with it, and stops it whatever happened. */
export async function withScenario<T>(
  options: ScenarioOptions,
  body: (scenario: Scenario) => Promise<T>,
): Promise<T> {
  const scenario = await startScenario(options);
  try {
    return await body(scenario);
  } finally {
    await scenario.stop();
  }
}

/**
 * The invariants a scenario ends with, whatever it broke on the way: every event processed, one job per event
 * key, each database effect run once (the statement audit), no effect left unfinished, one welcome email per
 * account.
 */
export function expectEachEventProcessedOnce(
  after: Snapshot,
  events: readonly ChaosEvent[],
  smtp: SmtpSink,
): void {
  expect(after.byStatus).toEqual({ processed: events.length });
  expect(after.keysWithSeveralJobs).toBe(0);
  expect(after.effects).toEqual(sumEffects(events));
  expect(after.unfinishedEffects).toBe(0);
  expect(smtp.counts().size).toBe(accountsOf(events));
}

/** No process logged a crash or a bug (an uncaught error, a fatal line, a TypeError...). */
export function expectNoCrashLines(processes: Iterable<WorkerProcess | SpawnedReceiver>): void {
  for (const p of processes) expect(crashLines(p.output())).toEqual([]);
}

/** SIGTERM to each worker: every one exits 0 (a graceful stop). */
export async function expectCleanStop(workers: readonly WorkerProcess[]): Promise<void> {
  for (const worker of workers) worker.kill('SIGTERM');
  for (const worker of workers) expect(await worker.exited).toBe(0);
}
