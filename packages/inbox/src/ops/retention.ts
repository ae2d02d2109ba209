import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { z } from 'zod';
import { deliveryCounts, eventPayloads, inboxSamples, webhookEvents } from '../sql/index.ts';
import { ensurePayloadPartitions, listPayloadPartitions, partitionEnd } from './partitions.ts';
import type { Statement } from '../sql/statement.ts';

/**
 * The shortest `keyDays` allowed. An event key is what makes a redelivery a no-op: delete it and the next
 * delivery of that event is accepted as new and its effects run again. Stripe retries a failed delivery for up
 * to 3 days, and a Dashboard "resend" reaches back 15 days (30 for reconciliation through the Events API), so
 * anything under a week is refused outright, and the default (90) covers all of them.
 */
export const MIN_KEY_DAYS = 7;

/**
 * The shortest `payloadDays` allowed without `force`: the providers' retry window (Stripe retries for 3 days).
 * Within it an event that went `dead` is the one an operator replays once the cause is fixed, and a replay of an
 * event whose payload is gone cannot run its effects. A shorter age is almost always a slip (`1ms` for `1m`, `30m`
 * for `30d`) that would drop every payload at once.
 */
export const MIN_PAYLOAD_DAYS = 3;

/**
 * Purge options that would destroy what should be kept: `code` says which rule, the message why. Thrown before
 * anything is touched.
 * - `below_retry_window`: `payloadDays` under `MIN_PAYLOAD_DAYS`; `force: true` purges anyway.
 * - `invalid_option`: anything else (a `keyDays` under `MIN_KEY_DAYS`, which `force` does not override, a
 *   non-number, a batch size out of range).
 * A `RangeError`, so a caller that only knows "bad options" can catch that.
 */
export class RetentionOptionError extends RangeError {
  readonly code: 'below_retry_window' | 'invalid_option';
  constructor(code: RetentionOptionError['code'], message: string) {
    super(message);
    this.name = 'RetentionOptionError';
    this.code = code;
  }
}

/** The pg-boss queue of scheduled purges. */
export const PURGE_QUEUE = 'webhook-inbox-purge';

export interface PurgeOptions {
  /**
   * Drop the payloads of finished events received longer ago than this, a whole UTC day at a time: a day's payloads
   * go once all of that day is older than this (so a payload is kept up to a day longer). Default 30.
   */
  payloadDays?: number;
  /**
   * Delete finished events (key and effect ledger; the payload goes with its day) received longer ago than this.
   * Default 90, minimum 7.
   */
  keyDays?: number;
  /**
   * Delete the console overview's history (`webhook_delivery_counts`, `inbox_samples`) older than this. Default 30,
   * minimum 1 (the overview charts the last day).
   */
  historyDays?: number;
  /**
   * Rows per statement at most (each statement is its own short transaction). Default 1000, at most 10 000. The
   * size actually used adapts to keep each batch well under `maxBatchMs`.
   */
  batchSize?: number;
  /** The reference time for both cutoffs. Default: now. */
  now?: Date;
  /**
   * The longest one batch may run (its `statement_timeout`), lock waits included; beyond it the batch is cancelled,
   * which releases its rows, and retried at half the size, down to one row (a batch of one row timed out five
   * times in a row stops the run: another transaction holds it). This
   * bounds how long an `INSERT ... ON CONFLICT` of a key being purged can wait, even on a loaded machine where a
   * batch of fixed size would run long. Default 50 ms.
   */
  maxBatchMs?: number;
  /** Stops between batches (graceful shutdown); the result then says `complete: false`. */
  signal?: AbortSignal;
  /** Allow a `payloadDays` under `MIN_PAYLOAD_DAYS` (the retry window). `keyDays` has no override. */
  force?: boolean;
  /** Count what a purge would change now, change nothing (`dryRun: true` in the result, `batches: 0`). */
  dryRun?: boolean;
}

export interface PurgeResult {
  /** Payloads removed: those of the days dropped, and of finished events of a day kept for an event in flight. */
  payloadsPurged: number;
  /** Days of payloads dropped whole (partitions of `webhook_event_payloads`). */
  payloadPartitionsDropped: number;
  /**
   * Expired days kept because an event received that day is still in flight (its worker reads its payload): the
   * payloads of that day's finished events were deleted row by row instead. A later run drops the day.
   */
  payloadPartitionsKept: number;
  /** Partitions created ahead for the days to come (`ensurePayloadPartitions`); none on a dry run. */
  partitionsCreated: number;
  /** Events deleted, key and all (their `effect_runs` go with them). */
  keysDeleted: number;
  /** `effect_runs` rows deleted with those events. */
  effectRunsDeleted: number;
  /** Rows of the overview's history deleted (`webhook_delivery_counts` and `inbox_samples`). */
  historyRowsDeleted: number;
  /**
   * True: nothing was changed, and the counts above are what a purge would change now (at most: rows a
   * transaction holds during a real run are left for the next run).
   */
  dryRun: boolean;
  /** Row-by-row statements run (key deletions, history, payloads of kept days), cancelled ones included. */
  batches: number;
  /** Batches cancelled for running past `maxBatchMs` (slow, or waiting on a lock another transaction holds). */
  timeouts: number;
  /**
   * The longest completed batch as the client saw it, ms (round trip included, so on a busy machine more than
   * the server-side time, which `maxBatchMs` bounds).
   */
  slowestBatchMs: number;
  /** The batch size in use at the end (it halves after a slow batch, doubles after a fast one). */
  finalBatchSize: number;
  /**
   * False when stopped early (aborted, or a batch of one row timed out five times in a row); the next run picks
   * up the rest.
   */
  complete: boolean;
  payloadCutoff: Date;
  keyCutoff: Date;
  historyCutoff: Date;
  durationMs: number;
  /**
   * Where `durationMs` went, ms: creating the partitions ahead and listing the expired days (`partitions`), deleting
   * expired keys (`keys`), the days of payloads (`payloads`, rests between days included), the overview's history
   * (`history`). On a dry run, the time each phase's count took.
   */
  phaseMs: PurgePhases;
}

export type PurgePhases = Record<'partitions' | 'keys' | 'payloads' | 'history', number>;

const DAY_MS = 86_400_000;

// statement_timeout (and a cancel request) ends a statement with query_canceled.
const QUERY_CANCELED = '57014';
const MAX_CONSECUTIVE_TIMEOUTS = 5;
// Between two days of payloads dropped in one run, the purge rests as long as freeing the last day's bytes at this
// rate takes, 5 s at most: about 1.6 s after a day of 100 MB, nothing after an empty one. On a file system that
// trims freed blocks at once (mounted with online `discard`), each drop is one large trim the WAL's writes wait
// behind, and the rest spreads them. Measured there on 20 such days (10 million events, `pnpm bench -- --soak`,
// 2-s slices at half the receiver's maximum), the receiver's p99 during the drops was 4.3x its usual with no rest
// (2.6 s in all), 1.3x with half this rest (24 s), and 1.02-1.25x with this rest (40 s, seven runs).
const DAY_REST_BYTES_PER_SECOND = 64 * 1024 * 1024;
const MAX_DAY_REST_MS = 5_000;
// Keys a day's count reads per statement: about 6 ms of one core here.
const COUNT_SLICE_ROWS = 20_000;

interface ResolvedPurgeOptions {
  payloadDays: number;
  keyDays: number;
  historyDays: number;
  batchSize: number;
  maxBatchMs: number;
}

/**
 * Checks purge options and fills in the defaults; throws a `RetentionOptionError` saying what is wrong. Run by
 * `purgeExpired` and by `schedulePurge` (so a bad schedule is refused when it is set, not at 3 a.m.).
 */
export function resolvePurgeOptions(options: PurgeOptions = {}): ResolvedPurgeOptions {
  const { payloadDays = 30, keyDays = 90, historyDays = 30, batchSize = 1000, maxBatchMs = 50 } = options;
  const invalid = (message: string) => new RetentionOptionError('invalid_option', `retention: ${message}`);
  if (!Number.isFinite(payloadDays) || payloadDays <= 0) {
    throw invalid(`payloadDays must be a positive number of days, got ${payloadDays}`);
  }
  if (payloadDays < MIN_PAYLOAD_DAYS && options.force !== true) {
    throw new RetentionOptionError(
      'below_retry_window',
      `retention: payloadDays must be at least ${MIN_PAYLOAD_DAYS} (the providers' retry window), got ` +
        `${+payloadDays.toPrecision(3)}: it would drop the payloads of every finished event older than ` +
        `that, dead ones an operator may still replay among them. Set \`force\` to purge anyway.`,
    );
  }
  if (!Number.isFinite(keyDays) || keyDays < MIN_KEY_DAYS) {
    throw invalid(
      `keyDays must be at least ${MIN_KEY_DAYS}, got ${keyDays}. An event key deleted while its ` +
        `provider may still redeliver it (Stripe retries for 3 days; a Dashboard resend reaches back 15 days) ` +
        `lets that delivery in as a new event and runs its side effects twice.`,
    );
  }
  if (!Number.isFinite(historyDays) || historyDays < 1) {
    throw invalid(`historyDays must be at least 1 (the console charts the last day), got ${historyDays}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw invalid(`batchSize must be an integer from 1 to 10000, got ${batchSize}`);
  }
  if (!Number.isInteger(maxBatchMs) || maxBatchMs < 10) {
    throw invalid(`maxBatchMs must be an integer of at least 10, got ${maxBatchMs}`);
  }
  return { payloadDays, keyDays, historyDays, batchSize, maxBatchMs };
}

interface BatchRow {
  n: number;
  last: string | null;
  /** Set by the deletions only: the ledger rows that went with the events. */
  effectRuns?: number;
}

/**
 * Applies retention and says what it did:
 * 1. deletes finished events (`processed`, `dead`) received more than `keyDays` ago, their effect ledger
 *    with them (ON DELETE CASCADE), in batches;
 * 2. drops the payloads of finished events received more than `payloadDays` ago a day at a time: each expired
 *    partition of `webhook_event_payloads` is detached (`CONCURRENTLY`) and dropped, unless an event received that
 *    day is still in flight, in which case the payloads of its finished events are deleted in batches and the day
 *    is kept for the next run;
 * 3. deletes the console overview's per-minute history (`webhook_delivery_counts`, `inbox_samples`) older than
 *    `historyDays`, in batches;
 * and first creates the partitions of the days ahead (`ensurePayloadPartitions`). Events still in flight
 * (`received`, `processing`, `failed`) are never touched, whatever their age; neither are rows another transaction
 * has locked (left for the next run). With `dryRun`, it counts those rows and changes nothing. Options that would
 * purge what should be kept (see `resolvePurgeOptions`) are refused with a `RetentionOptionError` before anything
 * is read.
 *
 * Each batch is one statement in its own transaction, cancelled if it runs past `maxBatchMs`; an
 * `INSERT ... ON CONFLICT` of a key in the batch waits for it (Postgres must know whether the row it conflicts
 * with is being deleted), so the receiver never waits behind more than one short batch. The batch size adapts:
 * halved after a batch that took over half of `maxBatchMs` or was cancelled, doubled (up to `batchSize`) after
 * one under a quarter. Dropping a day waits for no lock the receiver holds and takes none it waits for. Idempotent:
 * run it as often as you like (see `schedulePurge`).
 *
 * @example
 * const result = await purgeExpired(pool, { payloadDays: 30, keyDays: 90 });
 * logger.info(result, 'retention purge');
 */
export async function purgeExpired(pool: pg.Pool, options: PurgeOptions = {}): Promise<PurgeResult> {
  const { payloadDays, keyDays, historyDays, batchSize, maxBatchMs } = resolvePurgeOptions(options);
  const started = performance.now();
  const now = options.now ?? new Date();
  const payloadCutoff = new Date(now.getTime() - payloadDays * DAY_MS);
  const keyCutoff = new Date(now.getTime() - keyDays * DAY_MS);
  const historyCutoff = new Date(now.getTime() - historyDays * DAY_MS);
  const result = {
    payloadsPurged: 0,
    payloadPartitionsDropped: 0,
    payloadPartitionsKept: 0,
    partitionsCreated: 0,
    keysDeleted: 0,
    effectRunsDeleted: 0,
    historyRowsDeleted: 0,
    dryRun: options.dryRun === true,
    batches: 0,
    timeouts: 0,
    slowestBatchMs: 0,
    finalBatchSize: batchSize,
    complete: true,
  };
  const phaseMs: PurgePhases = { partitions: 0, keys: 0, payloads: 0, history: 0 };
  let phaseStarted = started;
  /** Ends the phase running since the last call (or the start). */
  const phaseDone = (phase: keyof PurgePhases) => {
    const now = performance.now();
    phaseMs[phase] = Math.round(now - phaseStarted);
    phaseStarted = now;
  };
  const finish = () => ({
    ...result,
    payloadCutoff,
    keyCutoff,
    historyCutoff,
    durationMs: Math.round(performance.now() - started),
    phaseMs,
  });
  const expired = (await listPayloadPartitions(pool)).filter(
    (partition) => partitionEnd(partition) <= payloadCutoff,
  );

  if (result.dryRun) {
    // Plain reads: they lock nothing, so they never delay the receiver's inserts, however long they take.
    phaseDone('partitions');
    const { rows } = await pool.query<{ events: number; effectRuns: number }>(
      webhookEvents.countPurgeable(keyCutoff),
    );
    result.keysDeleted = rows[0]?.events ?? 0;
    result.effectRunsDeleted = rows[0]?.effectRuns ?? 0;
    phaseDone('keys');
    for (const partition of expired) {
      const done = await pool.query<{ n: number }>(eventPayloads.countDonePayloads(partition.name));
      result.payloadsPurged += done.rows[0]?.n ?? 0;
    }
    phaseDone('payloads');
    for (const count of [deliveryCounts.countDeliveryCountsBefore, inboxSamples.countInboxSamplesBefore]) {
      const history = await pool.query<{ n: number }>(count(historyCutoff));
      result.historyRowsDeleted += history.rows[0]?.n ?? 0;
    }
    phaseDone('history');
    return finish();
  }

  result.partitionsCreated = (await ensurePayloadPartitions(pool)).created.length;
  phaseDone('partitions');
  let size = batchSize;
  const client = await pool.connect();
  let broken = false;
  try {
    /**
     * Runs `batch` until it changes fewer rows than asked (or the run stops), adapting the size; returns the rows
     * changed.
     */
    const drain = async (batch: (from: string, limit: number) => Statement, field: CountedField) => {
      let from = '-infinity';
      let timeoutsInARow = 0;
      for (;;) {
        if (options.signal?.aborted) {
          result.complete = false;
          return;
        }
        let row: BatchRow | undefined;
        const batchStarted = performance.now();
        try {
          result.batches++;
          row = await runBatch(client, maxBatchMs, batch(from, size));
        } catch (error) {
          if ((error as { code?: unknown }).code !== QUERY_CANCELED) throw error;
          result.timeouts++;
          // A slow batch (pages not in memory) shrinks until it fits; only a single row that keeps timing out
          // (a lock another transaction holds, or a disk that slow) ends the run.
          if (size > 1) size = Math.max(1, Math.floor(size / 2));
          else if (++timeoutsInARow >= MAX_CONSECUTIVE_TIMEOUTS) {
            result.complete = false;
            return;
          }
          continue;
        }
        const elapsed = performance.now() - batchStarted;
        result.slowestBatchMs = Math.max(result.slowestBatchMs, Math.round(elapsed));
        timeoutsInARow = 0;
        const n = row?.n ?? 0;
        result[field] += n;
        result.effectRunsDeleted += row?.effectRuns ?? 0;
        if (row?.last) from = row.last;
        if (n < size) return;
        if (elapsed > maxBatchMs / 2) size = Math.max(1, Math.floor(size / 2));
        else if (elapsed < maxBatchMs / 4) size = Math.min(batchSize, size * 2);
      }
    };

    // Keys first: their payloads then go with their days. The overview's history last: rows of past minutes that
    // nothing writes any more (a receiver adds only to recent ones).
    await drain((from, limit) => webhookEvents.deleteFinishedEvents(keyCutoff, from, limit), 'keysDeleted');
    phaseDone('keys');
    for (const [i, partition] of expired.entries()) {
      if (options.signal?.aborted) {
        result.complete = false;
        break;
      }
      const size = await client.query<{ bytes: string }>(eventPayloads.partitionBytes(partition.name));
      const bytes = Number(size.rows[0]?.bytes ?? 0);
      if (partition.detachPending) {
        // An earlier run was cut off between detaching and dropping: finish its work.
        await client.query(eventPayloads.finalizeDetach(partition.name));
      } else {
        const inFlight = await client.query<{ unfinished: boolean }>(
          eventPayloads.hasUnfinishedEvents(partition.day, partitionEnd(partition)),
        );
        if (inFlight.rows[0]?.unfinished) {
          result.payloadPartitionsKept++;
          await drain(
            (from, limit) => eventPayloads.deleteDonePayloads(partition.name, from, limit),
            'payloadsPurged',
          );
          continue;
        }
        const payloads = await countDayPayloads(client, partition.name);
        await client.query(eventPayloads.detachPartition(partition.name));
        result.payloadsPurged += payloads;
      }
      await client.query(eventPayloads.dropDetachedPartition(partition.name));
      result.payloadPartitionsDropped++;
      // A dropped day's files are freed at once. Days dropped back to back (a backlog of them, on a large table) can
      // keep the disk busy enough to hold up the receiver's commits (trims, with online discard), so the purge rests
      // between days, in proportion to the bytes the last one freed. A daily run drops one day and never rests.
      if (i < expired.length - 1) {
        const rest = Math.min(MAX_DAY_REST_MS, (bytes / DAY_REST_BYTES_PER_SECOND) * 1000);
        await sleep(rest, undefined, { signal: options.signal }).catch(() => {});
      }
    }
    phaseDone('payloads');
    for (const batch of [deliveryCounts.deleteDeliveryCounts, inboxSamples.deleteInboxSamples]) {
      await drain((from, limit) => batch(historyCutoff, from, limit), 'historyRowsDeleted');
    }
    phaseDone('history');
    result.finalBatchSize = size;
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    client.release(broken);
  }
  return finish();
}

type CountedField = 'keysDeleted' | 'payloadsPurged' | 'historyRowsDeleted';

/**
 * One batch in its own transaction, its deadline set for that transaction only: a session setting would outlive
 * the batch behind a transaction-mode pooler, on a server session other clients then use.
 */
async function runBatch(
  client: pg.PoolClient,
  timeoutMs: number,
  statement: Statement,
): Promise<BatchRow | undefined> {
  const [row] = await queryWith<BatchRow>(client, { statement_timeout: timeoutMs }, statement);
  return row;
}

/**
 * The payloads a day's partition holds, counted COUNT_SLICE_ROWS keys at a time along its primary key (from the
 * index alone), on one core, resting between slices twice as long as each took. One count of a day (170 000 rows)
 * held a core for 50 ms, a parallel one both, and the receiver's commits queued behind it. The slices are not one
 * snapshot: the count is exact for a day nothing writes to any more, which an expired day is.
 */
export async function countDayPayloads(client: pg.PoolClient, partition: string): Promise<number> {
  const serial = { max_parallel_workers_per_gather: 0 };
  let counted = 0;
  let after: eventPayloads.PayloadKey | undefined;
  for (;;) {
    const started = performance.now();
    const [key] = await queryWith<eventPayloads.PayloadKey>(
      client,
      serial,
      eventPayloads.partitionKeyAfter(partition, after, COUNT_SLICE_ROWS),
    );
    if (!key) {
      const [rest] = await queryWith<{ n: number }>(
        client,
        serial,
        eventPayloads.countPartitionRows(partition, after),
      );
      return counted + (rest?.n ?? 0);
    }
    counted += COUNT_SLICE_ROWS;
    after = key;
    await sleep(2 * (performance.now() - started));
  }
}

/** One statement in its own transaction, with settings (`set local`) that end with it. */
async function queryWith<R extends pg.QueryResultRow>(
  client: pg.PoolClient,
  settings: Record<string, number>,
  statement: Statement,
): Promise<R[]> {
  await client.query('begin');
  try {
    for (const [name, value] of Object.entries(settings)) await client.query(`set local ${name} = ${value}`);
    const { rows } = await client.query<R>(statement);
    await client.query('commit');
    return rows;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  }
}

/** What a scheduled purge job carries: the retention settings, checked again when the job runs. */
export interface PurgeJobData {
  payloadDays?: number;
  keyDays?: number;
  historyDays?: number;
  batchSize?: number;
}

const purgeJobData = z.object({
  payloadDays: z.number().optional(),
  keyDays: z.number().optional(),
  historyDays: z.number().optional(),
  batchSize: z.number().optional(),
});

export interface SchedulePurgeOptions extends PurgeJobData {
  /** Cron expression (pg-boss: 5 fields, minute precision). Default `17 3 * * *`: daily at 03:17. */
  cron?: string;
  /** Time zone of the cron expression. Default UTC. */
  tz?: string;
}

/**
 * Creates the purge queue and (re)sets its recurring schedule; idempotent, call it at every start of the worker.
 * pg-boss then sends one job to `PURGE_QUEUE` per occurrence, from whichever instance runs its scheduler (the
 * default, `schedule: true`), and a worker registered with `createPurgeHandler` runs it. The queue policy is
 * `exclusive`: a purge that is still running is never joined by a second one.
 *
 * @example
 * await schedulePurge(boss, { cron: '17 3 * * *', payloadDays: 30, keyDays: 90 });
 * await boss.work(PURGE_QUEUE, createPurgeHandler(pool, { logger }));
 */
export async function schedulePurge(boss: PgBoss, options: SchedulePurgeOptions = {}): Promise<void> {
  const { cron = '17 3 * * *', tz = 'UTC', ...data } = options;
  resolvePurgeOptions(data);
  await boss.createQueue(PURGE_QUEUE, {
    policy: 'exclusive',
    retryLimit: 2,
    retryDelay: 300,
    expireInSeconds: 3600,
  });
  await boss.schedule(PURGE_QUEUE, cron, data, { tz });
}

/**
 * The `boss.work(PURGE_QUEUE, ...)` handler: runs `purgeExpired` with each job's settings, stops early when
 * pg-boss aborts the job (shutdown, expiry), logs and returns the results (stored as the job's output). A job
 * with invalid settings fails (and is retried) with the validation error.
 */
export function createPurgeHandler(
  pool: pg.Pool,
  {
    logger,
    onRun,
  }: {
    logger: Pick<Logger, 'info'>;
    /** Told of every run: its result, or the error it failed with (metrics). */
    onRun?: (run: { result: PurgeResult } | { error: unknown }) => void;
  },
): (jobs: Job<PurgeJobData>[]) => Promise<PurgeResult[]> {
  return async (jobs) => {
    const results: PurgeResult[] = [];
    for (const job of jobs) {
      let result: PurgeResult;
      try {
        const data = purgeJobData.parse(job.data ?? {});
        result = await purgeExpired(pool, { ...data, signal: job.signal });
      } catch (error) {
        onRun?.({ error });
        throw error;
      }
      onRun?.({ result });
      logger.info({ job: job.id, ...result }, 'retention purge');
      results.push(result);
    }
    return results;
  };
}
