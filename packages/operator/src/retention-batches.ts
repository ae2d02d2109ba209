import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { eventPayloads, type Statement } from '@webhook-inbox/inbox/sql';

// statement_timeout (and a cancel request) ends a statement with query_canceled.
const QUERY_CANCELED = '57014';
const MAX_CONSECUTIVE_TIMEOUTS = 5;
// Keys a day's count reads per statement: about 6 ms of one core here.
const COUNT_SLICE_ROWS = 20_000;

/** What one batch statement answers: rows changed, the last key it reached, ledger rows deleted with them. */
interface BatchRow {
  n: number;
  last: string | null;
  /** Set by the deletions only: the ledger rows that went with the events. */
  effectRuns?: number;
}

/** A batch statement: the next `limit` rows after key `from`. */
export type BatchStatement = (from: string, limit: number) => Statement;

/**
 * Runs batch statements on one connection, each in its own transaction and cancelled past `maxBatchMs`, at a size
 * that adapts: halved after a batch that took over half of `maxBatchMs` or was cancelled, doubled (up to
 * `maxSize`) after one under a quarter. The size and the counters carry over from one `drain` to the next.
 */
export class AdaptiveBatches {
  /** The batch size the next statement asks for. */
  size: number;
  /** Statements run, cancelled ones included. */
  batches = 0;
  /** Statements cancelled for running past `maxBatchMs`. */
  timeouts = 0;
  /** The longest completed statement as the client saw it, ms (round trip included). */
  slowestBatchMs = 0;
  /** False once a drain stopped early: aborted, or a batch of one row timed out five times in a row. */
  complete = true;

  private readonly client: pg.PoolClient;
  private readonly maxBatchMs: number;
  private readonly maxSize: number;
  private readonly signal: AbortSignal | undefined;

  constructor(client: pg.PoolClient, maxBatchMs: number, maxSize: number, signal?: AbortSignal) {
    this.client = client;
    this.maxBatchMs = maxBatchMs;
    this.maxSize = maxSize;
    this.signal = signal;
    this.size = maxSize;
  }

  /** Runs `batch` until it changes fewer rows than asked (or the run stops); returns what it changed. */
  async drain(batch: BatchStatement): Promise<{ rows: number; effectRuns: number }> {
    const changed = { rows: 0, effectRuns: 0 };
    let from = '-infinity';
    let timeoutsInARow = 0;
    for (;;) {
      if (this.signal?.aborted) {
        this.complete = false;
        return changed;
      }
      const started = performance.now();
      let row: BatchRow | undefined;
      try {
        this.batches++;
        [row] = await queryWith<BatchRow>(
          this.client,
          { statement_timeout: this.maxBatchMs },
          batch(from, this.size),
        );
      } catch (error) {
        if ((error as { code?: unknown }).code !== QUERY_CANCELED) throw error;
        this.timeouts++;
        // A slow batch (pages not in memory) shrinks until it fits; only a single row that keeps timing out
        // (a lock another transaction holds, or a disk that slow) ends the run.
        if (this.size > 1) this.size = Math.max(1, Math.floor(this.size / 2));
        else if (++timeoutsInARow >= MAX_CONSECUTIVE_TIMEOUTS) {
          this.complete = false;
          return changed;
        }
        continue;
      }
      const elapsed = performance.now() - started;
      this.slowestBatchMs = Math.max(this.slowestBatchMs, Math.round(elapsed));
      timeoutsInARow = 0;
      const n = row?.n ?? 0;
      changed.rows += n;
      changed.effectRuns += row?.effectRuns ?? 0;
      if (row?.last) from = row.last;
      if (n < this.size) return changed;
      this.adapt(elapsed);
    }
  }

  private adapt(elapsedMs: number): void {
    if (elapsedMs > this.maxBatchMs / 2) this.size = Math.max(1, Math.floor(this.size / 2));
    else if (elapsedMs < this.maxBatchMs / 4) this.size = Math.min(this.maxSize, this.size * 2);
  }
}

/**
 * The payloads a day's partition holds, counted COUNT_SLICE_ROWS keys at a time along its primary key (from the
 * index alone), on one core, resting between slices twice as long as each took: one count of a whole day (170 000
 * rows) holds a core for 50 ms, a parallel one both, and the receiver's commits queue behind it. The slices are
 * not one snapshot: the count is exact for a day nothing writes to any more, which an expired day is.
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

/**
 * One statement in its own transaction, with settings (`set local`) that end with it: a session setting would
 * outlive the statement behind a transaction-mode pooler, on a server session other clients then use.
 */
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
