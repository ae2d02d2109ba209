import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { eventPayloads, webhookEvents } from '@webhook-inbox/inbox/sql';
import { auditLog, deliveryCounts, inboxSamples } from './sql/index.ts';
import {
  ensurePayloadPartitions,
  listPayloadPartitions,
  partitionEnd,
  type PayloadPartition,
} from '@webhook-inbox/inbox/partitions';
import { AdaptiveBatches, countDayPayloads } from './retention-batches.ts';
import { resolvePurgeOptions, type PurgeOptions } from './retention-options.ts';

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
  /** Audit-log rows older than `auditDays` deleted (through `audit_log_purge`). */
  auditRowsDeleted: number;
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

export type PurgePhases = Record<'partitions' | 'keys' | 'payloads' | 'history' | 'audit', number>;

const DAY_MS = 86_400_000;

// Between two days of payloads dropped in one run, the purge rests as long as freeing the last day's bytes at this
// rate takes, 5 s at most: about 1.6 s after a day of 100 MB, nothing after an empty one. On a file system that
// trims freed blocks at once (mounted with online `discard`), each drop is one large trim the WAL's writes wait
// behind, and the rest spreads them. The rate is the soak bench's trade-off (`pnpm bench -- --soak`, 20 such days
// at half the receiver's maximum): with it the receiver's p99 during the drops stays within 1.02-1.25x of its
// usual for 40 s of rests in all; half the rest gives 1.3x, none 4.3x.
const DAY_REST_BYTES_PER_SECOND = 64 * 1024 * 1024;
const MAX_DAY_REST_MS = 5_000;

// A day's detach waits 50 ms at most for its lock (migration 0014); a table that stays busy gets these many tries.
const DETACH_ATTEMPTS = 8;
const DETACH_FIRST_REST_MS = 100;

type RunFigures = Pick<
  PurgeResult,
  'dryRun' | 'batches' | 'timeouts' | 'slowestBatchMs' | 'finalBatchSize' | 'complete'
>;

interface Cutoffs {
  payloadCutoff: Date;
  keyCutoff: Date;
  historyCutoff: Date;
}

/** What the steps count; the run's batch counters come from `AdaptiveBatches`. */
type Counts = Pick<
  PurgeResult,
  | 'payloadsPurged'
  | 'payloadPartitionsDropped'
  | 'payloadPartitionsKept'
  | 'partitionsCreated'
  | 'keysDeleted'
  | 'effectRunsDeleted'
  | 'historyRowsDeleted'
  | 'auditRowsDeleted'
>;

/** Times the phases of a run, each from the end of the one before (or the start). */
class PhaseClock {
  readonly started = performance.now();
  readonly phaseMs: PurgePhases = { partitions: 0, keys: 0, payloads: 0, history: 0, audit: 0 };
  private phaseStarted = this.started;

  done(phase: keyof PurgePhases): void {
    const now = performance.now();
    this.phaseMs[phase] = Math.round(now - this.phaseStarted);
    this.phaseStarted = now;
  }
}

/**
 * Applies retention and says what it did:
 * 1. deletes finished events (`processed`, `dead`) received more than `keyDays` ago, their effect ledger
 *    with them (ON DELETE CASCADE), in batches;
 * 2. drops the payloads of finished events received more than `payloadDays` ago a day at a time: each expired
 *    partition of `webhook_event_payloads` is detached and dropped (through migration 0014's functions), unless an event received that
 *    day is still in flight, in which case the payloads of its finished events are deleted in batches and the day
 *    is kept for the next run;
 * 3. deletes the console overview's per-minute history (`webhook_delivery_counts`, `inbox_samples`) older than
 *    `historyDays`, in batches;
 * 4. deletes audit-log rows older than `auditDays` through `audit_log_purge`, the one way past the table's
 *    append-only trigger;
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
 * one under a quarter. Detaching a day holds the payloads' table for its catalog change alone, waiting 50 ms at most
 * for it (the receiver's inserts wait as long at worst; a busier table is tried again, then left for the next run);
 * dropping it locks nothing the receiver uses. Idempotent:
 * run it as often as you like (see `schedulePurge`).
 *
 * @example
 * const result = await purgeExpired(pool, { payloadDays: 30, keyDays: 90 });
 * logger.info(result, 'retention purge');
 */
export async function purgeExpired(pool: pg.Pool, options: PurgeOptions = {}): Promise<PurgeResult> {
  const resolved = resolvePurgeOptions(options);
  const clock = new PhaseClock();
  const cutoffs = cutoffsOf(options.now ?? new Date(), resolved);
  const counts: Counts = {
    payloadsPurged: 0,
    payloadPartitionsDropped: 0,
    payloadPartitionsKept: 0,
    partitionsCreated: 0,
    keysDeleted: 0,
    effectRunsDeleted: 0,
    historyRowsDeleted: 0,
    auditRowsDeleted: 0,
  };
  const expired = (await listPayloadPartitions(pool)).filter(
    (partition) => partitionEnd(partition) <= cutoffs.payloadCutoff,
  );
  const finish = (run: RunFigures): PurgeResult => ({
    ...counts,
    ...run,
    ...cutoffs,
    durationMs: Math.round(performance.now() - clock.started),
    phaseMs: clock.phaseMs,
  });

  if (options.dryRun === true) {
    await countPurgeable(pool, cutoffs, expired, counts, clock, resolved.auditDays);
    return finish({
      dryRun: true,
      batches: 0,
      timeouts: 0,
      slowestBatchMs: 0,
      finalBatchSize: resolved.batchSize,
      complete: true,
    });
  }

  counts.partitionsCreated = (await ensurePayloadPartitions(pool)).created.length;
  clock.done('partitions');
  const client = await pool.connect();
  let broken = false;
  try {
    const batches = new AdaptiveBatches(client, resolved.maxBatchMs, resolved.batchSize, options.signal);
    // Keys first: their payloads then go with their days. The overview's history last: rows of past minutes that
    // nothing writes any more (a receiver adds only to recent ones).
    await deleteExpiredKeys(batches, cutoffs.keyCutoff, counts);
    clock.done('keys');
    await dropExpiredDays(client, batches, expired, counts, options.signal);
    clock.done('payloads');
    await deleteExpiredHistory(batches, cutoffs.historyCutoff, counts);
    clock.done('history');
    const audit = await client.query<{ removed: number }>(auditLog.purgeAudit(resolved.auditDays));
    counts.auditRowsDeleted = Number(audit.rows[0]?.removed ?? 0);
    clock.done('audit');
    return finish({
      dryRun: false,
      batches: batches.batches,
      timeouts: batches.timeouts,
      slowestBatchMs: batches.slowestBatchMs,
      finalBatchSize: batches.size,
      complete: batches.complete,
    });
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    client.release(broken);
  }
}

function cutoffsOf(now: Date, days: { payloadDays: number; keyDays: number; historyDays: number }): Cutoffs {
  const before = (n: number) => new Date(now.getTime() - n * DAY_MS);
  return {
    payloadCutoff: before(days.payloadDays),
    keyCutoff: before(days.keyDays),
    historyCutoff: before(days.historyDays),
  };
}

/**
 * The dry run: counts what each phase would remove. Plain reads: they lock nothing, so they never delay the
 * receiver's inserts, however long they take.
 */
async function countPurgeable(
  pool: pg.Pool,
  cutoffs: Cutoffs,
  expired: PayloadPartition[],
  counts: Counts,
  clock: PhaseClock,
  auditDays: number,
): Promise<void> {
  clock.done('partitions');
  const { rows } = await pool.query<{ events: number; effectRuns: number }>(
    webhookEvents.countPurgeable(cutoffs.keyCutoff),
  );
  counts.keysDeleted = rows[0]?.events ?? 0;
  counts.effectRunsDeleted = rows[0]?.effectRuns ?? 0;
  clock.done('keys');
  for (const partition of expired) {
    const done = await pool.query<{ n: number }>(eventPayloads.countDonePayloads(partition.name));
    counts.payloadsPurged += done.rows[0]?.n ?? 0;
  }
  clock.done('payloads');
  for (const count of [deliveryCounts.countDeliveryCountsBefore, inboxSamples.countInboxSamplesBefore]) {
    const history = await pool.query<{ n: number }>(count(cutoffs.historyCutoff));
    counts.historyRowsDeleted += history.rows[0]?.n ?? 0;
  }
  clock.done('history');
  const audit = await pool.query<{ n: number }>(auditLog.countAuditOlderThan(auditDays));
  counts.auditRowsDeleted = audit.rows[0]?.n ?? 0;
  clock.done('audit');
}

/** Step 1: finished events received before `keyCutoff`, their ledger rows with them. */
async function deleteExpiredKeys(batches: AdaptiveBatches, keyCutoff: Date, counts: Counts): Promise<void> {
  const { rows, effectRuns } = await batches.drain((from, limit) =>
    webhookEvents.deleteFinishedEvents(keyCutoff, from, limit),
  );
  counts.keysDeleted += rows;
  counts.effectRunsDeleted += effectRuns;
}

/**
 * Step 2: the days' tables a cut-off run detached and did not drop are dropped; then each expired day's partition
 * detached and dropped, or, when an event received that day is still in
 * flight, the payloads of its finished events deleted in batches (the day stays for the next run). Rests between
 * days (see DAY_REST_BYTES_PER_SECOND).
 */
async function dropExpiredDays(
  client: pg.PoolClient,
  batches: AdaptiveBatches,
  expired: PayloadPartition[],
  counts: Counts,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { rows: detached } = await client.query<{ name: string }>(eventPayloads.selectDetachedDays());
  for (const { name } of detached) {
    await client.query(eventPayloads.dropDetachedPartition(name));
    counts.payloadPartitionsDropped++;
  }
  for (const [i, partition] of expired.entries()) {
    if (signal?.aborted) {
      batches.complete = false;
      return;
    }
    const sized = await client.query<{ bytes: string }>(eventPayloads.partitionBytes(partition.name));
    const bytes = Number(sized.rows[0]?.bytes ?? 0);
    let payloads = 0;
    // A partition pending detach was left by an earlier run cut off between detaching and dropping: finish it.
    if (!partition.detachPending) {
      const inFlight = await client.query<{ unfinished: boolean }>(
        eventPayloads.hasUnfinishedEvents(partition.day, partitionEnd(partition)),
      );
      if (inFlight.rows[0]?.unfinished) {
        counts.payloadPartitionsKept++;
        const { rows } = await batches.drain((from, limit) =>
          eventPayloads.deleteDonePayloads(partition.name, from, limit),
        );
        counts.payloadsPurged += rows;
        continue;
      }
      payloads = await countDayPayloads(client, partition.name);
    }
    if (!(await detachDay(client, partition.name, signal))) {
      // The table stayed busy through every attempt: the day is left for the next run.
      batches.complete = false;
      continue;
    }
    counts.payloadsPurged += payloads;
    await client.query(eventPayloads.dropDetachedPartition(partition.name));
    counts.payloadPartitionsDropped++;
    // A dropped day's files are freed at once. Days dropped back to back (a backlog of them, on a large table) can
    // keep the disk busy enough to hold up the receiver's commits (trims, with online discard), so the purge rests
    // between days, in proportion to the bytes the last one freed. A daily run drops one day and never rests.
    if (i < expired.length - 1) {
      const rest = Math.min(MAX_DAY_REST_MS, (bytes / DAY_REST_BYTES_PER_SECOND) * 1000);
      await sleep(rest, undefined, { signal }).catch(() => {});
    }
  }
}

/**
 * Detaches a day's partition, trying again after a rest (doubling from DETACH_FIRST_REST_MS) while the parent's lock
 * does not come within the detach's own 50 ms (see `eventPayloads.detachPartition`). False after DETACH_ATTEMPTS,
 * about 25 s of rests, or when aborted.
 */
async function detachDay(
  client: pg.PoolClient,
  name: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  for (let attempt = 0; attempt < DETACH_ATTEMPTS && !signal?.aborted; attempt++) {
    try {
      await client.query(eventPayloads.detachPartition(name));
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code !== eventPayloads.LOCK_NOT_AVAILABLE) throw error;
    }
    await sleep(DETACH_FIRST_REST_MS * 2 ** attempt, undefined, { signal }).catch(() => {});
  }
  return false;
}

/** Step 3: the console overview's per-minute history before `historyCutoff`. */
async function deleteExpiredHistory(
  batches: AdaptiveBatches,
  historyCutoff: Date,
  counts: Counts,
): Promise<void> {
  for (const batch of [deliveryCounts.deleteDeliveryCounts, inboxSamples.deleteInboxSamples]) {
    const { rows } = await batches.drain((from, limit) => batch(historyCutoff, from, limit));
    counts.historyRowsDeleted += rows;
  }
}
