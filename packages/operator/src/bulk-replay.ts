import type pg from 'pg';
import { DEFAULT_GROUP, validateGroup } from '@webhook-inbox/inbox/queue';
import {
  ReplayError,
  replayEvent,
  type ReplayDeps,
  type ReplayOptions,
  type ReplayResult,
} from './replay.ts';
import type { EventCursor, EventFilter } from '@webhook-inbox/inbox/event-store';
import { eventFilter } from '@webhook-inbox/inbox/sql';

/**
 * Bulk replay, the one behind the CLI (`replayEvents`) and the console's operations (`replayChunk` per chunk, its
 * cursor recorded between them): the events matching a filter, received up to the instant the set was counted,
 * each replayed as `replayEvent` does (in its own transaction, for the filter's consumer group), oldest first, in
 * keyset chunks.
 */

/** A bulk replay's events: those matching `filter` (its `group` is the one replayed), received up to `upTo`. */
export interface BulkReplaySet {
  filter: EventFilter;
  /** `received_at`'s bound, as `countBulkReplay` answers it (or an instant the caller fixed). */
  upTo: string;
}

/**
 * Counts a bulk replay's set: the events matching `filter` received up to `upTo`, or up to the database's clock
 * now when none is given (which then bounds the set).
 */
export async function countBulkReplay(
  pool: pg.Pool,
  filter: EventFilter,
  upTo: Date | null = null,
): Promise<{ set: BulkReplaySet; total: number }> {
  const { rows } = await pool.query<{ n: number; upTo: string }>(eventFilter.countEvents(filter, upTo));
  const { n, upTo: bound } = rows[0]!;
  return { set: { filter, upTo: bound }, total: n };
}

export interface ChunkOptions extends Omit<ReplayOptions, 'forceEffect' | 'group'> {
  /** Events read and replayed. */
  limit: number;
  /** Replays in flight at once (each its own short transaction, so they overlap their round trips). Default 1. */
  concurrency?: number;
  /** Called after each event replayed (not one refused), within the same concurrency; the chunk waits for it. */
  onReplayed?: (result: ReplayResult) => Promise<void>;
}

export interface ChunkOutcome {
  /** One per event replayed, in the set's order. */
  results: ReplayResult[];
  /** The events refused (purged since the count, say), with why. */
  refused: ReplayError[];
  /** Events read: fewer than the limit when the set is done. */
  read: number;
  /** Where the next chunk starts: the last event read (the cursor given when none was). */
  cursor: EventCursor | null;
}

/**
 * Replays the next `limit` events of the set after `cursor`. A `ReplayError` is counted in `refused` and the chunk
 * goes on; anything else (the database down) rejects the chunk, which the caller resumes from its last cursor.
 */
export async function replayChunk(
  deps: ReplayDeps,
  set: BulkReplaySet,
  cursor: EventCursor | null,
  { limit, concurrency = 1, onReplayed, ...options }: ChunkOptions,
): Promise<ChunkOutcome> {
  const group = set.filter.group ?? DEFAULT_GROUP;
  const { rows } = await deps.pool.query<{ provider: string; eventId: string; cursorAt: string }>(
    eventFilter.nextEvents(set.filter, set.upTo, limit, cursor),
  );
  const outcomes: (ReplayResult | ReplayError)[] = [];
  let next = 0;
  const replayNext = async (): Promise<void> => {
    for (let i = next++; i < rows.length; i = next++) {
      const row = rows[i]!;
      let result: ReplayResult;
      try {
        result = await replayEvent(deps, row.provider, row.eventId, {
          ...options,
          group,
          auditNothingToReplay: false,
        });
      } catch (error) {
        if (!(error instanceof ReplayError)) throw error;
        outcomes[i] = error;
        continue;
      }
      outcomes[i] = result;
      await onReplayed?.(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, replayNext));
  const last = rows.at(-1);
  return {
    results: outcomes.filter((o): o is ReplayResult => !(o instanceof ReplayError)),
    refused: outcomes.filter((o): o is ReplayError => o instanceof ReplayError),
    read: rows.length,
    cursor: last ? [last.cursorAt, last.provider, last.eventId] : cursor,
  };
}

export interface BulkReplayFilters {
  /**
   * The events' status in the group replayed. Optional for another group than the default: without it, every
   * event of the group's types in the range, including those the group never had (a backfill).
   */
  status?: EventFilter['status'];
  provider?: string | undefined;
  type?: string | undefined;
  since?: Date | undefined;
  /**
   * The events of one failure group: `effect` failing with this normalized error (`sql/failure-groups.ts`). Enough
   * on its own, without `status`, for any group.
   */
  failure?: EventFilter['failure'];
}

export interface BulkReplayOptions extends Omit<ReplayOptions, 'forceEffect'> {
  /** Replay at most this many events; the rest are counted in `remaining`. Default: all of them. */
  limit?: number;
  /** Events read per page. Default 200. */
  chunkSize?: number;
  /** Told after each chunk: events replayed so far, of `total`. */
  onProgress?: (done: number, total: number) => void;
}

export interface BulkReplayResult {
  /** One per event replayed, oldest first. */
  results: ReplayResult[];
  /** Events that matched when the replay began. */
  total: number;
  /** Matching events not replayed because `limit` stopped it (0 when it went through them all). */
  remaining: number;
}

/**
 * Replays every event matching the filters that was received before the call, oldest first, in keyset chunks of
 * `chunkSize`: no cap but `limit`, and what a limit leaves is counted. The first event refused stops it
 * (`ReplayError`).
 */
export async function replayEvents(
  deps: ReplayDeps,
  filters: BulkReplayFilters,
  options: BulkReplayOptions = {},
): Promise<BulkReplayResult> {
  const { limit = Infinity, chunkSize = 200, onProgress, group: given, ...replayOptions } = options;
  const group = validateGroup(given ?? DEFAULT_GROUP);
  if (filters.status === undefined && filters.failure === undefined && group === DEFAULT_GROUP) {
    throw new RangeError(
      "a bulk replay of the default group needs a status or a failure group (another group's may omit both)",
    );
  }
  const { set, total } = await countBulkReplay(deps.pool, { ...filters, group });
  const results: ReplayResult[] = [];
  let cursor: EventCursor | null = null;
  while (results.length < limit) {
    const page = Math.min(chunkSize, limit - results.length);
    const chunk = await replayChunk(deps, set, cursor, { ...replayOptions, limit: page });
    if (chunk.refused[0]) throw chunk.refused[0];
    results.push(...chunk.results);
    cursor = chunk.cursor;
    onProgress?.(results.length, total);
    if (chunk.read < page) return { results, total, remaining: 0 };
  }
  if (!cursor) return { results, total, remaining: 0 };
  const left = await deps.pool.query<{ n: number }>(eventFilter.countEvents(set.filter, set.upTo, cursor));
  return { results, total, remaining: left.rows[0]!.n };
}
