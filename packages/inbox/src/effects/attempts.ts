/**
 * The attempt history (`effect_attempts`): one row per effect run in a batch, written in one statement once the
 * batch's outcomes are known (a failure is `dead` when its event is settled dead) and before the events are
 * settled, so an event's status never runs ahead of its history. Best effort: a history that cannot be written
 * is logged and never fails the jobs.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';
import { errorFields, errorLine } from '../error-text.ts';
import { insertAttempts, type AttemptRecord, type LostAttempt } from '../sql/effect-attempts.ts';
import type { EventRun } from './task.ts';

/** This process, as the attempts name it. */
export const WORKER_ID = `${hostname()}/${process.pid}`;

/** When a task's attempt ended and how long it ran: set by the runner as each task finishes. */
export interface AttemptTiming {
  finishedAt: Date;
  durationMs: number;
}

/** The batch's attempts, one per task that ran (a task found done already ran nothing). */
export function attemptsOf(
  runs: readonly EventRun[],
  timings: { get(task: object): AttemptTiming | undefined },
): AttemptRecord[] {
  const records: AttemptRecord[] = [];
  for (const run of runs) {
    for (const task of run.tasks) {
      const timing = timings.get(task);
      if (!timing || task.outcome === undefined || task.outcome === 'skipped') continue;
      const failed = task.outcome instanceof Error;
      records.push({
        provider: task.ref.provider,
        eventId: task.ref.eventId,
        effect: task.ref.effect,
        startedAt: new Date(timing.finishedAt.getTime() - timing.durationMs),
        finishedAt: timing.finishedAt,
        durationMs: timing.durationMs,
        outcome: !failed ? 'completed' : run.settlement?.status === 'dead' ? 'dead' : 'failed',
        error: failed ? errorLine(task.outcome) : null,
        worker: WORKER_ID,
        jobId: run.job.id,
      });
    }
  }
  return records;
}

/** How many times a record whose number was taken is written again before it is given up. */
const NUMBERING_ROUNDS = 3;

/**
 * Writes `records` to the history. A record whose number a concurrent writer of the same effect's history took
 * (a delivery and its fan-out's batch write `destination.<name>` at once) is written again in a new statement,
 * which reads that writer's committed row and numbers after it; a record of an event purged meanwhile is dropped.
 * Throws when the database does.
 */
export async function writeAttempts(pool: pg.Pool, records: readonly AttemptRecord[]): Promise<void> {
  let pending = records;
  for (let round = 0; pending.length > 0 && round < NUMBERING_ROUNDS; round++) {
    const { rows } = await pool.query<LostAttempt>(insertAttempts(pending));
    const lost = new Set(rows.map((row) => row.index));
    pending = pending.filter((_, index) => lost.has(index));
  }
}

/** `writeAttempts` for the runner's batch: a history that cannot be written is logged, never fails the jobs. */
export async function recordAttempts(pool: pg.Pool, records: AttemptRecord[], log: Logger): Promise<void> {
  if (records.length === 0) return;
  try {
    await writeAttempts(pool, records);
  } catch (error) {
    log.error({ err: errorFields(error), attempts: records.length }, 'could not record the attempt history');
  }
}
