import { randomBytes } from 'node:crypto';
import { errorFields, errorLine } from '@webhook-inbox/inbox/error-text';
import { replayChunk, type BulkReplaySet } from '@webhook-inbox/operator/bulk-replay';
import { DEFAULT_GROUP, ensureQueues } from '@webhook-inbox/inbox/queue';
import type { EffectLookup } from '@webhook-inbox/inbox/effect-routes';
import type { ReplayDeps } from '@webhook-inbox/operator/replay';
import type { EventCursor } from '@webhook-inbox/inbox/event-store';
import { replayOperations } from '@webhook-inbox/operator/sql';
import type { Logger } from 'pino';
import { storedFilter } from '../filter.ts';
import { run } from '../db.ts';

export interface RunnerOptions extends Omit<ReplayDeps, 'effectsFor'> {
  /**
   * The effects registered per event type in a consumer group, read again for each chunk (a worker may have
   * restarted).
   */
  effectsFor: (group: string) => Promise<EffectLookup | undefined>;
  logger: Logger;
  /** Events replayed between two progress records (and cancellation checks). Default 200. */
  chunkSize?: number;
  /** Replays in flight at once within a chunk. Default 4. */
  concurrency?: number;
  /** How often an idle runner looks for an operation, ms. Default 1000. */
  pollIntervalMs?: number;
  /** How long a claim holds without a progress record; a crashed runner's operation is free after it. Default 30 s. */
  leaseMs?: number;
  /** The provider names whose event ids a search matches in any case, as the console's pages search them. */
  caselessIdProviders?: readonly string[] | undefined;
}

export interface OperationsRunner {
  /** Look for an operation now instead of at the next poll. */
  wake(): void;
  /** Finishes the chunk in hand, releases its operation for the next runner, stops. Idempotent. */
  stop(): Promise<void>;
}

interface OperationRow {
  id: number;
  /** The filter's given fields (see FilterForm), or a selection's keys and group (`storedFilter`). */
  filter: Record<string, unknown>;
  receivedUpTo: Date;
  cursor: EventCursor | null;
}

/**
 * Runs bulk replay operations in the background: claims the oldest unfinished one (a lease in
 * `replay_operations`, so several processes can run this and never share one), replays its events (the inbox's
 * bulk replay, for the filter's consumer group) in chunks oldest first from its cursor, records progress after each chunk, stops at a cancellation, completes when no
 * event is left. A runner that starts picks up whatever is unfinished, so an operation survives a restart; one
 * left by a crashed process is taken once its lease expires.
 */
export function startOperationsRunner(options: RunnerOptions): OperationsRunner {
  const chunkSize = options.chunkSize ?? 200;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const concurrency = options.concurrency ?? 4;
  const leaseMs = options.leaseMs ?? 30_000;
  const runner = `console-${randomBytes(6).toString('hex')}`;
  const { logger, pool } = options;
  let stopping = false;
  let wakeUp: (() => void) | undefined;

  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pollIntervalMs);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function runOperation(operation: OperationRow): Promise<void> {
    const filter = storedFilter(operation.filter, new Date(), options.caselessIdProviders);
    const group = filter.group ?? DEFAULT_GROUP;
    // Its worker created them before recording its routes; a replay does not depend on that.
    if (group !== DEFAULT_GROUP) await ensureQueues(options.boss, undefined, group);
    const set: BulkReplaySet = { filter, upTo: operation.receivedUpTo.toISOString() };
    let cursor = operation.cursor;
    logger.info({ operation: operation.id, runner, group }, 'bulk replay operation running');
    for (;;) {
      const effectsFor = await options.effectsFor(group);
      const deps: ReplayDeps = { pool, boss: options.boss, ...(effectsFor ? { effectsFor } : {}) };
      // An event purged since the count is refused, skipped and counted; anything else rejects the chunk (the
      // database is down, say) and the operation resumes from the last recorded cursor.
      // Each event replayed is recorded at once with its state (the outcome counts), before the chunk's progress.
      const chunk = await replayChunk(deps, set, cursor, {
        limit: chunkSize,
        concurrency,
        onReplayed: async (key) => {
          await run(pool, replayOperations.recordReplayed(operation.id, key, group));
        },
      });
      if (chunk.read === 0) {
        await run(pool, replayOperations.completeOperation(operation.id, runner));
        logger.info({ operation: operation.id }, 'bulk replay operation completed');
        return;
      }
      cursor = chunk.cursor;
      if (!cursor) return;
      const lastRefused = chunk.refused.at(-1);
      const [state] = await run<{ status: string }>(
        pool,
        replayOperations.recordProgress(operation.id, runner, leaseMs, {
          done: chunk.read,
          enqueued: chunk.results.filter((result) => result.enqueued).length,
          failed: chunk.refused.length,
          cursor,
          lastError: lastRefused ? errorLine(lastRefused) : null,
        }),
      );
      if (!state) {
        logger.warn(
          { operation: operation.id },
          'bulk replay operation lease lost; another runner continues it',
        );
        return;
      }
      if (state.status !== 'running') {
        logger.info({ operation: operation.id, status: state.status }, 'bulk replay operation stopped');
        await run(pool, replayOperations.releaseOperation(operation.id, runner, null));
        return;
      }
      if (stopping) {
        await run(pool, replayOperations.releaseOperation(operation.id, runner, null));
        return;
      }
    }
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      let operation: OperationRow | undefined;
      let interrupted = false;
      try {
        [operation] = await run<OperationRow>(pool, replayOperations.claimOperation(runner, leaseMs));
        if (operation) await runOperation(operation);
      } catch (error) {
        interrupted = true;
        logger.error(
          { ...errorFields(error), operation: operation?.id },
          'bulk replay operation interrupted',
        );
        if (operation) {
          await run(pool, replayOperations.releaseOperation(operation.id, runner, errorLine(error))).catch(
            () => {},
          );
        }
      }
      // Idle, or failing: wait before looking again rather than retry in a tight loop.
      if ((!operation || interrupted) && !stopping) await sleep();
    }
  }

  const done = loop();
  return {
    wake: () => wakeUp?.(),
    async stop() {
      stopping = true;
      wakeUp?.();
      await done;
    },
  };
}
