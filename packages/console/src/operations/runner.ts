import { randomBytes } from 'node:crypto';
import { errorFields, errorLine } from '@webhook-inbox/inbox/error-text';
import { ReplayError, replayEvent, type EffectLookup, type ReplayDeps } from '@webhook-inbox/inbox/replay';
import { eventFilter, replayOperations } from '@webhook-inbox/inbox/sql';
import type { Logger } from 'pino';
import { parseFilter, readForm } from '../filter.ts';
import { run } from '../db.ts';

export interface RunnerOptions extends Omit<ReplayDeps, 'effectsFor'> {
  /** The effects registered per event type, read again for each chunk (a worker may have restarted). */
  effectsFor: () => Promise<EffectLookup | undefined>;
  logger: Logger;
  /** Events replayed between two progress records (and cancellation checks). Default 200. */
  chunkSize?: number;
  /** Replays in flight at once within a chunk. Default 4. */
  concurrency?: number;
  /** How often an idle runner looks for an operation, ms. Default 1000. */
  pollIntervalMs?: number;
  /** How long a claim holds without a progress record; a crashed runner's operation is free after it. Default 30 s. */
  leaseMs?: number;
}

export interface OperationsRunner {
  /** Look for an operation now instead of at the next poll. */
  wake(): void;
  /** Finishes the chunk in hand, releases its operation for the next runner, stops. Idempotent. */
  stop(): Promise<void>;
}

interface OperationRow {
  id: number;
  /** The filter's given fields (see FilterForm). */
  filter: Record<string, string>;
  receivedUpTo: Date;
  cursor: eventFilter.EventCursor | null;
}

/**
 * Runs bulk replay operations in the background: claims the oldest unfinished one (a lease in
 * `replay_operations`, so several processes can run this and never share one), replays its events in chunks
 * oldest first from its cursor, records progress after each chunk, stops at a cancellation, completes when no
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
    const { filter } = parseFilter(readForm(operation.filter), new Date());
    let cursor = operation.cursor;
    logger.info({ operation: operation.id, runner }, 'bulk replay operation running');
    for (;;) {
      const events = await run<{ provider: string; eventId: string; cursorAt: string }>(
        pool,
        eventFilter.nextEvents(filter, operation.receivedUpTo, chunkSize, cursor),
      );
      if (events.length === 0) {
        await run(pool, replayOperations.completeOperation(operation.id, runner));
        logger.info({ operation: operation.id }, 'bulk replay operation completed');
        return;
      }
      const effectsFor = await options.effectsFor();
      const deps: ReplayDeps = { pool, boss: options.boss, ...(effectsFor ? { effectsFor } : {}) };
      let enqueued = 0;
      let failed = 0;
      let lastError: string | null = null;
      // A few replays at a time: each is its own short transaction, so they overlap their round trips.
      let next = 0;
      const replayNext = async (): Promise<void> => {
        for (let event = events[next++]; event; event = events[next++]) {
          try {
            const result = await replayEvent(deps, event.provider, event.eventId);
            if (result.enqueued) enqueued++;
          } catch (error) {
            // An event purged since the count is skipped and counted; anything else stops the chunk (the database
            // is down, say) and the operation resumes from the last recorded cursor.
            if (!(error instanceof ReplayError)) throw error;
            failed++;
            lastError = errorLine(error);
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, replayNext));
      const last = events.at(-1);
      if (!last) return;
      cursor = [last.cursorAt, last.provider, last.eventId];
      const [state] = await run<{ status: string }>(
        pool,
        replayOperations.recordProgress(operation.id, runner, leaseMs, {
          done: events.length,
          enqueued,
          failed,
          cursor,
          lastError,
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
