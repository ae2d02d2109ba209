import { randomBytes } from 'node:crypto';
import { createHistogram } from 'node:perf_hooks';
import type pg from 'pg';
import { createPool } from '../packages/db/src/index.ts';
import { purgeExpired, type PurgeResult } from '../packages/inbox/src/ops/retention.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import { eventBody, load, SERVER, signedRequest, spawnReceiver, type BenchContext } from './receiver.ts';

const CONNECTIONS = 64;
/** Turns each of the empty and the full table is measured in. */
const ROUNDS = 3;
/** Days the synthetic events are spread over, up to now; retention keeps the last RETAIN_DAYS of them. */
const SPREAD_DAYS = 60;
const RETAIN_DAYS = 30;
/** Rows written per set-up statement. */
const CHUNK = 500_000;
/** Latency under retention is sampled in slices of this length until the purge is done. */
const SLICE_MS = 5_000;

interface Figures {
  maxRps: number;
  p99Ms: number;
}

/**
 * `pnpm bench -- --soak` (not CI): the receiver on an event log of months. Loads BENCH_SOAK_EVENTS synthetic
 * finished events (10 million by default, spread over 60 days, one ledger row each; written by the server itself
 * from generate_series, with progress), then measures a receiver on that table against one on an empty database
 * of the same server, in alternating turns: the maximum over 64 connections, then the p99 at half the empty
 * table's maximum. Then it runs the retention purge (keep 30 days: half the rows go) while the receiver takes new
 * events at that half rate, and reports the receiver's p99 during the purge, how long the purge took, and the
 * tables' size before and after.
 */
export async function soakBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const events = Number(process.env.BENCH_SOAK_EVENTS ?? 10_000_000);
  if (!Number.isInteger(events) || events < CHUNK) throw new Error(`BENCH_SOAK_EVENTS must be >= ${CHUNK}`);
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const url = await ctx.postgres.database('bench_soak');
  const emptyUrl = await ctx.postgres.database('bench_soak_empty');
  const pool = createPool({ connectionString: url, max: 4 });
  const runId = randomBytes(4).toString('hex');
  let n = 0;
  const next = () => signedRequest(eventBody(`evt_soak_new_${runId}_${n++}`));
  const prepared = (count: number) => {
    const requests = Array.from({ length: count }, next);
    let i = 0;
    return () => requests[i++] ?? next();
  };
  const setupStarted = performance.now();
  await fill(pool, events, (done) =>
    ctx.log(`soak: ${done.toLocaleString('en')} of ${events.toLocaleString('en')} events written`),
  );
  ctx.log('soak: vacuum analyze');
  await pool.query('vacuum analyze webhook_events, effect_runs');
  // The set-up wrote gigabytes of WAL: its checkpoint would otherwise flush them during the measurements (a
  // first run saw a 1.1 s p99 on whichever receiver's turn it fell in).
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
  const sliceMs = Math.max(2_000, ctx.durationMs / ROUNDS);
  try {
    ctx.log(`soak: warm-up, then ${ROUNDS} turns of ${sliceMs / 1000} s on the empty and the full table`);
    for (const r of Object.values(receivers))
      await load(r.url, { durationMs: 2_000, connections: CONNECTIONS, next }, 'accepted');
    const max = { empty: { completed: 0, seconds: 0 }, full: { completed: 0, seconds: 0 } };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['empty', 'full'] as const) {
        const result = await load(
          receivers[mode].url,
          { durationMs: sliceMs, connections: CONNECTIONS, next: prepared(25_000) },
          'accepted',
        );
        max[mode].completed += result.completed;
        max[mode].seconds += sliceMs / 1000;
      }
    }
    const halfRate = Math.max(1, Math.floor(max.empty.completed / max.empty.seconds / 2));
    const latency = { empty: createHistogram(), full: createHistogram() };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['empty', 'full'] as const) {
        const result = await load(
          receivers[mode].url,
          {
            durationMs: sliceMs,
            ratePerSecond: halfRate,
            next: prepared(halfRate * (sliceMs / 1000) + 100),
          },
          'accepted',
        );
        latency[mode].add(result.histogram);
      }
    }
    const figures = (mode: 'empty' | 'full'): Figures => ({
      maxRps: max[mode].completed / max[mode].seconds,
      p99Ms: latency[mode].percentile(99) / 1e6,
    });
    const empty = { ...figures('empty'), halfRate };
    const full = figures('full');
    await receivers.empty.stop();

    ctx.log(`soak: retention (keep ${RETAIN_DAYS} days) under load at ${empty.halfRate}/s`);
    const during = createHistogram();
    let purge: PurgeResult | undefined;
    const purging = purgeExpired(pool, {
      keyDays: RETAIN_DAYS,
      payloadDays: RETAIN_DAYS,
      batchSize: 10_000,
    }).then((result) => (purge = result));
    let slices = 0;
    while (!purge) {
      const slice = await load(
        receiver.url,
        { durationMs: SLICE_MS, ratePerSecond: empty.halfRate, next: prepared(empty.halfRate * 6) },
        'accepted',
      );
      during.add(slice.histogram);
      slices++;
      if (slices % 6 === 0) ctx.log(`soak: retention running, ${slices * (SLICE_MS / 1000)} s`);
    }
    await purging;
    const afterPurge = await sizes(pool);
    ctx.log('soak: vacuum after the purge');
    await pool.query('vacuum webhook_events, effect_runs');
    const afterVacuum = await sizes(pool);
    const duringP99 = during.percentile(99) / 1e6;
    const result = purge;

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
          measurement: `receiver p99 at ${empty.halfRate}/s (half the empty max), ms`,
          'empty table': fixed(empty.p99Ms, 1),
          'full table': fixed(full.p99Ms, 1),
          'full / empty': fixed(full.p99Ms / empty.p99Ms, 2),
          target: '<= 1.1',
          result: full.p99Ms / empty.p99Ms <= 1.1 ? 'ok' : 'MISSED',
        },
        {
          measurement: 'receiver p99 during retention (full table), ms',
          'empty table': '',
          'full table': fixed(duringP99, 1),
          'full / empty': `${fixed(duringP99 / full.p99Ms, 2)} of full`,
          target: '<= 1.2 of full',
          result: duringP99 / full.p99Ms <= 1.2 ? 'ok' : 'MISSED',
        },
        {
          measurement: 'retention: seconds to delete the older half',
          'empty table': '',
          'full table': fixed(result.durationMs / 1000, 1),
          'full / empty': '',
          target: 'seconds',
          result: result.durationMs < 10_000 ? 'ok' : 'MISSED',
        },
      ],
      notes: [
        `set-up: ${events.toLocaleString('en')} finished events over ${SPREAD_DAYS} days (~600-byte payloads, 1 ledger row each) in ${fixed(setupSeconds, 0)} s`,
        `bytes per event (webhook_events + effect_runs, tables, TOAST and indexes): ${fixed(before.total / events, 0)} (${mb(before.total)} MB for the full table)`,
        `retention deleted ${result.keysDeleted.toLocaleString('en')} events and ${result.effectRunsDeleted.toLocaleString('en')} ledger rows in ${result.batches} batches (slowest ${result.slowestBatchMs} ms, ${result.timeouts} timed out); the receiver took new events meanwhile (${slices} slices of ${SLICE_MS / 1000} s)`,
        `size on disk: ${mb(before.total)} MB before, ${mb(afterPurge.total)} MB after the purge, ${mb(afterVacuum.total)} MB after VACUUM (deleted rows leave free space inside the files; only dropping whole partitions returns it)`,
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
  const spanMs = SPREAD_DAYS * 24 * 3600 * 1000;
  for (let from = 0; from < events; from += CHUNK) {
    const to = Math.min(events, from + CHUNK) - 1;
    await pool.query(
      `insert into webhook_events (provider, event_id, type, payload, headers, source, received_at, status, attempts, processed_at)
       select 'stripe', 'evt_soak_' || i, 'customer.updated',
              jsonb_build_object('id', 'evt_soak_' || i, 'type', 'customer.updated', 'object', 'event',
                'data', jsonb_build_object('object', jsonb_build_object('id', 'cus_' || md5(i::text),
                  'email', md5(i::text || 'e') || '@example.test', 'name', md5(i::text || 'n'),
                  'description', repeat(md5(i::text || 'd'), 8)))),
              '{}'::jsonb, 'webhook', t, 'processed', 1, t
         from generate_series($1::int, $2::int) as i,
              lateral (select now() - make_interval(secs => ($3::bigint - i) * $4::float8 / 1000)) as at(t)`,
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

async function sizes(pool: pg.Pool): Promise<{ total: number }> {
  const { rows } = await pool.query<{ total: string }>(
    `select (pg_total_relation_size('webhook_events') + pg_total_relation_size('effect_runs'))::text as total`,
  );
  return { total: Number(rows[0]!.total) };
}
