import type pg from 'pg';
import { startSmtpSink } from '@webhook-inbox/testing/smtp';
import { createPool } from '../packages/db/src/index.ts';
import { createGroupCommit, DEFAULT_GROUP_COMMIT } from '../packages/inbox/src/group-commit.ts';
import { DEFAULT_QUEUE_SETTINGS } from '../packages/inbox/src/queue.ts';
import type { BenchContext } from './lib/context.ts';
import { cpuMs, ownCpuMs } from './lib/process.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import {
  count,
  sendAll,
  spawnReady,
  stop,
  timeUntil,
  WORKER,
  workerStartFlags,
} from './lib/worker-process.ts';
import { checkoutEvent, startProducer } from '@webhook-inbox/scenarios/worker';

/** The tables whose size grows with events: the inbox's, pg-boss's jobs, and the example product's. */
const TABLES = {
  webhook_events: 'inbox',
  webhook_event_payloads: 'inbox: the payloads, one partition per day',
  effect_runs: 'inbox',
  'pgboss.job': 'pg-boss (until its retention deletes completed jobs)',
  accounts: 'example product',
  subscriptions: 'example product',
} as const;

interface Snapshot {
  /** Bytes on disk per table: heap, TOAST and indexes (a partitioned table: all its partitions). */
  bytes: Record<keyof typeof TABLES, number>;
  walLsn: string;
}

/**
 * What one event costs the database and the CPUs, for capacity planning (docs/deployment.md#sizing):
 * N checkout events (the 3.8 kB Stripe fixture, three effects each) recorded by group commit at 64 concurrent
 * callers (what the receiver does, without HTTP), then processed by the worker. Measured per event: bytes on disk
 * per table after each phase, WAL written by each phase, and CPU time of the recording process, the worker and
 * PostgreSQL. Sizes and WAL do not depend on the machine's load; CPU time barely does (it is time on a CPU, not
 * wall time).
 */
export async function sizingBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const events = Number(process.env.BENCH_SIZING_EVENTS ?? 10_000);
  const url = await ctx.postgres.database('bench_sizing');
  const pool = createPool({ connectionString: url, max: 24 });
  const producer = await startProducer(pool, url, DEFAULT_QUEUE_SETTINGS);
  const smtp = await startSmtpSink({ parse: false });
  const postgres = () => cpuMs(ctx.postgres.postmasterPid(), { children: true });
  try {
    const recorder = createGroupCommit({ pool, boss: producer.boss }, DEFAULT_GROUP_COMMIT);
    const payloadBytes: number[] = [];
    const start = await snapshot(pool);

    ctx.log(`sizing: recording ${events} checkout events (group commit, 64 callers)`);
    let [ownBefore, pgBefore] = [ownCpuMs(), postgres()];
    await sendAll(
      events,
      async (i) => {
        const event = checkoutEvent({
          customer: `cus_size_${i}`,
          subscription: `sub_size_${i}`,
          email: `s${i}@example.test`,
        });
        payloadBytes.push(Buffer.byteLength(event.payloadText));
        await recorder.record({ headers: {}, ...event });
      },
      64,
    );
    const recording = { here: ownCpuMs() - ownBefore, postgres: postgres() - pgBefore };
    const recorded = await snapshot(pool);

    ctx.log(`sizing: the worker processes them`);
    const worker = await spawnReady(
      process.execPath,
      [...workerStartFlags(), WORKER],
      { DATABASE_URL: url, SMTP_URL: smtp.url, LOG_LEVEL: 'info', WORKER_PORT: '0' },
      '"worker started"',
    );
    [ownBefore, pgBefore] = [cpuMs(worker.pid!), postgres()];
    const drain = await timeUntil(events, () =>
      count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`),
    );
    const processing = { worker: cpuMs(worker.pid!) - ownBefore, postgres: postgres() - pgBefore };
    await stop(worker);
    const processed = await snapshot(pool);

    const perEvent = (bytes: number) => fixed(bytes / events, 0);
    const wal = async (from: Snapshot, to: Snapshot) => perEvent(await walBytes(pool, from, to));
    const rows: BenchTable['rows'] = Object.entries(TABLES).map(([table, owner]) => ({
      measurement: `on disk: ${table} (${owner}), bytes/event`,
      recorded: perEvent(
        recorded.bytes[table as keyof typeof TABLES] - start.bytes[table as keyof typeof TABLES],
      ),
      processed: perEvent(
        processed.bytes[table as keyof typeof TABLES] - start.bytes[table as keyof typeof TABLES],
      ),
    }));
    rows.push(
      {
        measurement: 'WAL written, bytes/event (each phase)',
        recorded: await wal(start, recorded),
        processed: await wal(recorded, processed),
      },
      {
        measurement: 'CPU ms/event: the recording process (group commit, no HTTP) / the worker process',
        recorded: fixed(recording.here / events, 3),
        processed: fixed(processing.worker / events, 3),
      },
      {
        measurement: 'CPU ms/event: PostgreSQL (postmaster and backends)',
        recorded: fixed(recording.postgres / events, 3),
        processed: fixed(processing.postgres / events, 3),
      },
    );
    const meanPayload = payloadBytes.reduce((sum, n) => sum + n, 0) / payloadBytes.length;
    return {
      title: `Sizing: what one checkout event costs on disk, in WAL and in CPU (${events} events)`,
      columns: ['measurement', 'recorded', 'processed'],
      rows,
      notes: [
        `payload ${fixed(meanPayload, 0)} bytes of JSON per event; "recorded": after group commit recorded every event and its job; "processed": after the worker ran the three effects (an SMTP conversation each, to a local sink) and marked them processed, measured from the same start`,
        `the worker drained them at ${fixed(drain.perSecond, 0)} events/s (batches of 50, 4 in flight); on-disk figures include free space inside pages left by updates (each status change writes a new row version until vacuum reclaims it)`,
        `PostgreSQL (embedded) ${ctx.postgres.durable ? 'durable' : 'fsync off'}; WAL includes full-page images after checkpoints, as in production`,
      ],
    };
  } finally {
    await smtp.close();
    await producer.stop();
    await pool.end();
  }
}

async function snapshot(pool: pg.Pool): Promise<Snapshot> {
  await pool.query('checkpoint');
  const bytes = {} as Record<keyof typeof TABLES, number>;
  for (const table of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
    // A partitioned table (pg-boss's job, the payloads) has no storage of its own: sum its partitions.
    const { rows } = await pool.query<{ bytes: string }>(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as bytes
         from pg_class c
        where c.oid = $1::regclass
           or c.oid in (select inhrelid from pg_inherits where inhparent = $1::regclass)`,
      [table],
    );
    bytes[table] = Number(rows[0]?.bytes ?? 0);
  }
  const { rows } = await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  return { bytes, walLsn: rows[0]!.lsn };
}

async function walBytes(pool: pg.Pool, from: Snapshot, to: Snapshot): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    'select pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text as bytes',
    [from.walLsn, to.walLsn],
  );
  return Number(rows[0]?.bytes ?? 0);
}
