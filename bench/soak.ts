import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { createPool } from '../packages/db/src/index.ts';
import { ensurePayloadPartitions } from '../packages/inbox/src/partitions.ts';
import { eventPayloads } from '../packages/inbox/src/sql/index.ts';
import type { PurgeOptions } from '../packages/operator/src/retention-options.ts';
import { purgeExpired, type PurgeResult } from '../packages/operator/src/retention.ts';
import { mountOf } from './lib/mounts.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import { inTurns, Turns } from './lib/turns.ts';
import type { BenchContext } from './lib/context.ts';
import { load, rateOf, receiverTurns } from './lib/receiver-load.ts';
import { SERVER, spawnReceiver } from './lib/receiver-process.ts';
import { newEventRequests, signedAhead } from './lib/stripe-requests.ts';

const CONNECTIONS = 64;
/** Turns of maximum load each of the empty and the full table is measured in. */
const ROUNDS = 5;
/**
 * Turns of SLICE_MS at half rate each table is measured in. A turn's p99 is its few dozen slowest requests, so
 * one stall of the machine (50-250 ms here, at any time, with or without retention) decides it; the figure is
 * the median turn, with the pooled p99 and the worst turn beside it. Twenty, because with eight to twelve turns
 * each the two tables' medians still range from 0.70x to 1.13x of each other from run to run.
 */
const HALF_ROUNDS = 20;
/** Days the synthetic events are spread over, up to now; retention keeps the last RETAIN_DAYS of them. */
const SPREAD_DAYS = 60;
const RETAIN_DAYS = 30;
/**
 * Daily runs measured, each dropping the next oldest day in a slice of its own (next to a slice with no purge): one
 * run fits in one slice, and one slice's p99 is too few requests to tell a drop from a stall of the machine, so
 * the figure is the median of many: ten, because with seven the median still ranges from 1.05x to 1.43x of the
 * slices with no purge from run to run. The ten daily runs and the month's other twenty days drop the thirty days
 * past RETAIN_DAYS.
 */
const DAILY_RUNS = 10;
/** How far into its slice a daily run starts: past the load generator's start, with time left for the run. */
const DAILY_START_MS = 500;
/** Slices with no purge running taken right before the rest of the month's days are dropped. */
const QUIET_BEFORE_MONTH = 5;
const DAY_MS = 86_400_000;
/** Rows written per set-up statement. */
const CHUNK = 500_000;
/**
 * Latency at half rate is sampled in slices of this length (until a purge is done). Short, so there are many: a
 * stall of the machine (50-250 ms, with or without retention, in about a third of 5-s slices here) decides the
 * p99 of the slice it falls in, and the median slice is then the one without.
 */
const SLICE_MS = Number(process.env.BENCH_SOAK_SLICE_MS ?? 2_000);

interface Figures {
  maxRps: number;
  p99: Turns;
}

/**
 * `pnpm bench -- --soak` (not CI): the receiver on an event log of months. Loads BENCH_SOAK_EVENTS synthetic
 * finished events (10 million by default, spread over 60 days, one ledger row each; written by the server itself
 * from generate_series, with progress), then measures a receiver on that table against one on an empty database
 * of the same server, in alternating turns: the maximum over 64 connections, then the p99 at half the empty
 * table's maximum (after a checkpoint and a turn each not counted, in ABBA order, as the median turn's p99 with
 * the pooled p99 and the worst turn beside it). Then, while the receiver takes new events at that half rate, it
 * runs retention: DAILY_RUNS daily runs (each drops the oldest day's payloads left), then the payloads of the rest
 * of a month of days at once (keep 30 days: daily partitions dropped), then the keys' (keep 30 days: half the
 * events and their ledger rows deleted row by row), and reports the receiver's p99 during each (its slices as the
 * turns above), how long each took, and the tables' size before and after.
 */
export async function soakBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const events = Number(process.env.BENCH_SOAK_EVENTS ?? 10_000_000);
  if (!Number.isInteger(events) || events < CHUNK) throw new Error(`BENCH_SOAK_EVENTS must be >= ${CHUNK}`);
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const url = await ctx.postgres.database('bench_soak');
  const emptyUrl = await ctx.postgres.database('bench_soak_empty');
  const pool = createPool({ connectionString: url, max: 4 });
  const runId = randomBytes(4).toString('hex');
  const next = newEventRequests(`soak_new_${runId}`);
  const prepared = (count: number) => signedAhead(next, count);
  const setupStarted = performance.now();
  await fill(pool, events, (done) =>
    ctx.log(`soak: ${done.toLocaleString('en')} of ${events.toLocaleString('en')} events written`),
  );
  ctx.log('soak: vacuum analyze');
  await pool.query('vacuum analyze webhook_events, effect_runs, webhook_event_payloads');
  // The set-up wrote gigabytes of WAL: its checkpoint would otherwise flush them during the measurements (a 1.1 s
  // p99 on whichever receiver's turn it falls in).
  ctx.log('soak: checkpoint');
  await pool.query('checkpoint');
  const setupSeconds = (performance.now() - setupStarted) / 1000;
  const before = await sizes(pool);

  // One receiver on the full table, one on an empty database of the same server, measured in alternating turns
  // (ROUNDS of each) so the machine's drift falls on both.
  const receivers = {
    empty: await spawnReceiver(SERVER, emptyUrl, 16, logLevel),
    full: await spawnReceiver(SERVER, url, 16, logLevel),
  };
  const receiver = receivers.full;
  const sliceMs = Math.max(6_000, ctx.durationMs / ROUNDS);
  try {
    ctx.log(`soak: warm-up, then ${ROUNDS} turns of ${sliceMs / 1000} s on the empty and the full table`);
    const max = await receiverTurns(receivers, {
      rounds: ROUNDS,
      sliceMs,
      connections: CONNECTIONS,
      next,
      signAhead: 25_000,
      warmUpMs: 2_000,
    });
    const halfRate = Math.max(1, Math.floor(rateOf(max.empty) / 2));
    // The maximum turns wrote more WAL than max_wal_size: the checkpoint they started would otherwise spread its
    // writes (and the full-page images that follow a checkpoint) over the half-rate turns, on one side or the other.
    ctx.log('soak: checkpoint after the maximum turns');
    await pool.query('checkpoint');
    // A turn each first, not counted: the first turn after the checkpoint pays for its full-page images.
    for (const mode of ['empty', 'full'] as const) {
      await load(
        receivers[mode].url,
        { durationMs: 3_000, ratePerSecond: halfRate, next: prepared(halfRate * 3 + 100) },
        'accepted',
      );
    }
    const latency = { empty: new Turns(), full: new Turns() };
    // ABBA: neither table always goes first.
    await inTurns(
      ['empty', 'full'] as const,
      HALF_ROUNDS,
      async (mode, round) => {
        const server = await serverActivity(pool);
        const result = await load(
          receivers[mode].url,
          {
            durationMs: SLICE_MS,
            ratePerSecond: halfRate,
            next: prepared(halfRate * (SLICE_MS / 1000) + 100),
          },
          'accepted',
        );
        latency[mode].add(result.histogram);
        // What the server did meanwhile: a turn's p99 is a few dozen requests, and one stall moves it.
        const after = await serverActivity(pool);
        ctx.log(
          `soak: half rate, turn ${round + 1} ${mode}: p99 ${fixed(result.histogram.percentile(99) / 1e6, 1)} ms, ` +
            `max ${fixed(result.histogram.max / 1e6, 1)} ms; WAL ${fixed((after.walBytes - server.walBytes) / result.completed, 0)} B/event, ` +
            `${fixed((after.fullPageImages - server.fullPageImages) / result.completed, 2)} full-page images/event, ` +
            `checkpoints ${after.checkpoints - server.checkpoints}, autovacuum workers at the end ${after.autovacuums}`,
        );
      },
      { abba: true },
    );
    const figures = (mode: 'empty' | 'full'): Figures => ({
      maxRps: rateOf(max[mode]),
      p99: latency[mode],
    });
    const empty = { ...figures('empty'), halfRate };
    const full = figures('full');
    await receivers.empty.stop();

    /** One slice of new events at half rate; its p99 goes into `into`. */
    const slice = async (what: string, into: Turns) => {
      const result = await load(
        receiver.url,
        {
          durationMs: SLICE_MS,
          ratePerSecond: empty.halfRate,
          next: prepared(empty.halfRate * (SLICE_MS / 1000) + 100),
        },
        'accepted',
      );
      into.add(result.histogram);
      ctx.log(
        `soak: ${what}, slice ${into.p99s.length}: p99 ${fixed(result.histogram.percentile(99) / 1e6, 1)} ms, ` +
          `max ${fixed(result.histogram.max / 1e6, 1)} ms`,
      );
    };
    /**
     * Runs a purge while the receiver takes new events at half rate, `startAfterMs` into the first slice; the
     * receiver's p99 meanwhile (into `during`).
     */
    const underLoad = async (what: string, options: PurgeOptions, during = new Turns(), startAfterMs = 0) => {
      ctx.log(`soak: ${what} under load at ${empty.halfRate}/s`);
      let result: PurgeResult | undefined;
      const purging = sleep(startAfterMs)
        .then(() => purgeExpired(pool, options))
        .then((done) => (result = done));
      while (!result) await slice(what, during);
      return { result: await purging, p99: during };
    };
    const cutoff = new Date(Date.now() - RETAIN_DAYS * DAY_MS);
    const expiredBefore = await payloadBytesBefore(pool, cutoff);
    // What the retention slices are compared with: slices at the same rate with no purge running, taken between
    // them (next to each daily run, and before the rest of the month), not the half-rate turns minutes earlier.
    const quiet = new Turns();
    // Daily runs first (each drops the oldest day left), then the rest of the month at once (a backlog). In ABBA
    // order with the slices with no purge, so neither kind always comes first. Each run starts DAILY_START_MS into
    // its slice, as a scheduled run starts at any moment of a steady load, not with the load generator's first
    // requests.
    const daily = { p99: new Turns(), slowestMs: 0 };
    for (let run = 0; run < DAILY_RUNS; run++) {
      if (run % 2 === 0) await slice('no purge', quiet);
      const { result } = await underLoad(
        `payload retention, daily run ${run + 1} of ${DAILY_RUNS}`,
        { payloadDays: SPREAD_DAYS - 1 - run, keyDays: 90 },
        daily.p99,
        DAILY_START_MS,
      );
      daily.slowestMs = Math.max(daily.slowestMs, result.durationMs);
      if (run % 2 === 1) await slice('no purge', quiet);
    }
    for (let i = 0; i < QUIET_BEFORE_MONTH; i++) await slice('no purge', quiet);
    const payloads = await underLoad('payload retention', { payloadDays: RETAIN_DAYS, keyDays: 90 });
    const afterPayloads = await sizes(pool);
    const expiredAfter = await payloadBytesBefore(pool, cutoff);
    const keys = await underLoad('key retention', {
      payloadDays: RETAIN_DAYS,
      keyDays: RETAIN_DAYS,
      batchSize: 10_000,
    });
    const afterKeys = await sizes(pool);
    ctx.log('soak: vacuum after the purges');
    await pool.query('vacuum webhook_events, effect_runs');
    const afterVacuum = await sizes(pool);

    const mb = (bytes: number) => fixed(bytes / 1024 / 1024, 0);
    return {
      title: `Soak: the receiver on ${events.toLocaleString('en')} events, and retention under load (same run)`,
      columns: ['measurement', 'empty table', 'full table', 'full / empty', 'target', 'result'],
      rows: [
        {
          measurement: `receiver max, new events (${CONNECTIONS} connections) /s`,
          'empty table': fixed(empty.maxRps, 0),
          'full table': fixed(full.maxRps, 0),
          'full / empty': fixed(full.maxRps / empty.maxRps, 2),
          target: '>= 0.9',
          result: full.maxRps / empty.maxRps >= 0.9 ? 'ok' : 'MISSED',
        },
        {
          measurement: `receiver p99 at ${empty.halfRate}/s (half the empty max), ms: median of ${HALF_ROUNDS} turns (pooled, worst)`,
          'empty table': String(empty.p99),
          'full table': String(full.p99),
          'full / empty': fixed(full.p99.medianMs / empty.p99.medianMs, 2),
          target: '<= 1.1',
          result: full.p99.medianMs / empty.p99.medianMs <= 1.1 ? 'ok' : 'MISSED',
        },
        {
          measurement: `receiver p99 with no purge running, between the purges (the baseline below), ms: median of ${SLICE_MS / 1000} s slices (pooled, worst)`,
          'empty table': '',
          'full table': String(quiet),
          'full / empty': `${fixed(quiet.medianMs / full.p99.medianMs, 2)} of full`,
          target: '',
          result: '',
        },
        {
          measurement: `receiver p99 during payload retention (${DAILY_RUNS} daily runs, each dropping the oldest day), ms: median of their ${SLICE_MS / 1000} s slices (pooled, worst)`,
          'empty table': '',
          'full table': String(daily.p99),
          'full / empty': `${fixed(daily.p99.medianMs / quiet.medianMs, 2)} of quiet`,
          target: '<= 1.2 of quiet',
          result: daily.p99.medianMs / quiet.medianMs <= 1.2 ? 'ok' : 'MISSED',
        },
        {
          measurement: `receiver p99 during payload retention (the rest of the month's days dropped), ms: median of ${SLICE_MS / 1000} s slices (pooled, worst)`,
          'empty table': '',
          'full table': String(payloads.p99),
          'full / empty': `${fixed(payloads.p99.medianMs / quiet.medianMs, 2)} of quiet`,
          target: '<= 1.2 of quiet',
          result: payloads.p99.medianMs / quiet.medianMs <= 1.2 ? 'ok' : 'MISSED',
        },
        {
          measurement: `payload retention: seconds to drop ${payloads.result.payloadPartitionsDropped} days (a daily run, the slowest of ${DAILY_RUNS})`,
          'empty table': '',
          'full table': `${fixed(payloads.result.durationMs / 1000, 1)} (${fixed(daily.slowestMs / 1000, 1)})`,
          'full / empty': '',
          target: 'seconds',
          result: payloads.result.durationMs < 60_000 ? 'ok' : 'MISSED',
        },
        {
          measurement: `payload bytes of the days past ${RETAIN_DAYS}, MB (before / after)`,
          'empty table': '',
          'full table': `${mb(expiredBefore)} / ${mb(expiredAfter)}`,
          'full / empty': '',
          target: 'all returned',
          result: expiredBefore > 0 && expiredAfter === 0 ? 'ok' : 'MISSED',
        },
        {
          measurement: `receiver p99 during key retention (row by row), ms: median of ${SLICE_MS / 1000} s slices (pooled, worst) (information)`,
          'empty table': '',
          'full table': String(keys.p99),
          'full / empty': `${fixed(keys.p99.medianMs / quiet.medianMs, 2)} of quiet`,
          target: '',
          result: '',
        },
        {
          measurement: 'key retention: seconds to delete the older half of the keys (information)',
          'empty table': '',
          'full table': fixed(keys.result.durationMs / 1000, 1),
          'full / empty': '',
          target: '',
          // A run cut short (its batches kept timing out) deletes less than the half and says so.
          result: keys.result.complete ? '' : `stopped early (${keys.result.timeouts} batches timed out)`,
        },
      ],
      notes: [
        `receiver p99 of each half-rate turn, ms: empty ${empty.p99.each()}; full ${full.p99.each()}; with no purge ${quiet.each()}; during the daily runs ${daily.p99.each()}; during the rest of the month of payloads ${payloads.p99.each()}`,
        fileSystem(ctx.postgres.dataDir),
        `set-up: ${events.toLocaleString('en')} finished events over ${SPREAD_DAYS} days (~600-byte payloads, 1 ledger row each) in ${fixed(setupSeconds, 0)} s`,
        `bytes per event: ${fixed(before.total / events, 0)} in all (${mb(before.total)} MB), of which payloads ${fixed(before.payloads / events, 0)}, event rows ${fixed(before.events / events, 0)}, ledger ${fixed(before.ledger / events, 0)} (tables, TOAST and indexes)`,
        `payload retention dropped ${payloads.result.payloadPartitionsDropped} days (${payloads.result.payloadsPurged.toLocaleString('en')} payloads, ${payloads.result.payloadPartitionsKept} kept) in ${fixed(payloads.result.durationMs / 1000, 1)} s; the receiver took new events meanwhile (${payloads.p99.p99s.length} slices of ${SLICE_MS / 1000} s)`,
        `key retention deleted ${keys.result.keysDeleted.toLocaleString('en')} events and ${keys.result.effectRunsDeleted.toLocaleString('en')} ledger rows in ${keys.result.batches} batches (slowest ${keys.result.slowestBatchMs} ms, ${keys.result.timeouts} timed out) over ${keys.p99.p99s.length} slices`,
        `size on disk: ${mb(before.total)} MB before, ${mb(afterPayloads.total)} MB after dropping the payloads, ${mb(afterKeys.total)} MB after deleting the keys, ${mb(afterVacuum.total)} MB after VACUUM (deleted rows leave free space inside the files; dropped days return theirs at once)`,
      ],
    };
  } finally {
    await receivers.empty.stop();
    await receivers.full.stop();
    await pool.end();
  }
}

/**
 * Writes `events` finished Stripe events spread over the last SPREAD_DAYS days, oldest first, with one completed
 * ledger row each, in chunks (each its own transaction).
 */
async function fill(pool: pg.Pool, events: number, progress: (done: number) => void): Promise<void> {
  const spanMs = SPREAD_DAYS * DAY_MS;
  await ensurePayloadPartitions(pool, { from: new Date(Date.now() - spanMs - DAY_MS) });
  for (let from = 0; from < events; from += CHUNK) {
    const to = Math.min(events, from + CHUNK) - 1;
    await pool.query(
      `with event as (
         insert into webhook_events (provider, event_id, type, headers, source, received_at, status, attempts, processed_at)
         select 'stripe', 'evt_soak_' || i, 'customer.updated', '{}'::jsonb, 'webhook', t, 'processed', 1, t
           from generate_series($1::int, $2::int) as i,
                lateral (select now() - make_interval(secs => ($3::bigint - i) * $4::float8 / 1000)) as at(t)
         returning provider, event_id, received_at)
       insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select provider, event_id, received_at,
              jsonb_build_object('id', event_id, 'type', 'customer.updated', 'object', 'event',
                'data', jsonb_build_object('object', jsonb_build_object('id', 'cus_' || md5(event_id),
                  'email', md5(event_id || 'e') || '@example.test', 'name', md5(event_id || 'n'),
                  'description', repeat(md5(event_id || 'd'), 8))))
         from event`,
      [from, to, events, spanMs / events],
    );
    await pool.query(
      `insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, completed_at)
       select 'stripe', 'evt_soak_' || i, 'sync', 'completed', 1, 'sync:evt_soak_' || i, now(), now()
         from generate_series($1::int, $2::int) as i`,
      [from, to],
    );
    progress(to + 1);
  }
}

/** Bytes on disk of the payload partitions of the days that ended before `cutoff`. */
async function payloadBytesBefore(pool: pg.Pool, cutoff: Date): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `select coalesce(sum(pg_total_relation_size(relid)), 0)::text as bytes
       from pg_partition_tree('webhook_event_payloads')
      where isleaf and relid::text < $1`,
    [eventPayloads.partitionName(cutoff)],
  );
  return Number(rows[0]!.bytes);
}

/** Bytes on disk (tables, TOAST and indexes) of the event rows, the payloads' partitions and the ledger. */
async function sizes(
  pool: pg.Pool,
): Promise<{ total: number; events: number; payloads: number; ledger: number }> {
  const { rows } = await pool.query<{ events: string; payloads: string; ledger: string }>(
    `select pg_total_relation_size('webhook_events')::text as events,
            (select coalesce(sum(pg_total_relation_size(relid)), 0)
               from pg_partition_tree('webhook_event_payloads'))::text as payloads,
            pg_total_relation_size('effect_runs')::text as ledger`,
  );
  const [events, payloads, ledger] = [rows[0]!.events, rows[0]!.payloads, rows[0]!.ledger].map(Number) as [
    number,
    number,
    number,
  ];
  return { total: events + payloads + ledger, events, payloads, ledger };
}

/** The server's cumulative WAL and checkpoint counters, and the autovacuum workers running now. */
async function serverActivity(
  pool: pg.Pool,
): Promise<{ walBytes: number; fullPageImages: number; checkpoints: number; autovacuums: number }> {
  const { rows } = await pool.query<{
    wal_bytes: string;
    wal_fpi: string;
    checkpoints: number;
    autovacuums: number;
  }>(
    `select w.wal_bytes::text, w.wal_fpi::text, (c.num_timed + c.num_requested)::int as checkpoints,
            (select count(*)::int from pg_stat_activity where backend_type = 'autovacuum worker') as autovacuums
       from pg_stat_wal w, pg_stat_checkpointer c`,
  );
  const row = rows[0]!;
  return {
    walBytes: Number(row.wal_bytes),
    fullPageImages: Number(row.wal_fpi),
    checkpoints: row.checkpoints,
    autovacuums: row.autovacuums,
  };
}

/** What the data directory's file system does with the blocks of a dropped day (see `MountInfo.onlineDiscard`). */
function fileSystem(dataDir: string): string {
  const mount = mountOf(dataDir);
  if (!mount) return 'data directory: file system not known (no findmnt)';
  return mount.onlineDiscard
    ? `data directory on ${mount.type} (${mount.point}) mounted with online discard: a dropped day's blocks are trimmed at once`
    : `data directory on ${mount.type} (${mount.point}) without online discard: a dropped day's blocks are freed, not trimmed`;
}
