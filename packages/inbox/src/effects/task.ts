/**
 * What the runner hands to the database and external effect modules: one effect of one event to run in this
 * attempt, and the context they run it with.
 */
import type { Database } from '@webhook-inbox/db';
import type pg from 'pg';
import type { JobWithMetadata } from 'pg-boss';
import type { Logger } from 'pino';
import type { EventJob } from '../queue.ts';
import type { EventSpan } from '../telemetry.ts';
import type { DatabaseEffectRef, FencedDatabaseRef } from '../sql/effect-runs.ts';
import type * as ledger from '../sql/ledger.ts';
import type { RegisteredEffect } from './registry.ts';
import type { InboxEventBase } from './types.ts';

export type Job = JobWithMetadata<EventJob>;

/** How a task ended: run and recorded, found done already, or failed. */
export type Outcome = 'completed' | 'skipped' | Error;

/** One event of the batch. */
export interface EventRun {
  job: Job;
  /** When pg-boss will consider this attempt's worker gone and let another worker retry the job (ms epoch). */
  expiresAt: number;
  /** The `received_at` of the event's row when this attempt started; unset when the job's event is not recorded. */
  receivedAt?: Date;
  /** The attempt's number (`startAttempts`): the fence its database effects and its settlement match on. */
  attempt?: number;
  /** The names of the effects registered for the event's type (a `processed` settlement needs each in the ledger). */
  effects?: readonly string[];
  settlement?: ledger.Settlement;
  /** Another job of the same batch for the same event: it ends as that one does and runs nothing itself. */
  shadowOf?: EventRun;
  permanent: boolean;
  tasks: Task[];
  /** This attempt's span, when tracing is on; its tasks' spans are its children. */
  span?: EventSpan | undefined;
}

/** One effect of one event to run in this attempt. */
export interface Task {
  run: EventRun;
  event: InboxEventBase;
  effect: RegisteredEffect;
  ref: DatabaseEffectRef;
  outcome?: Outcome;
}

/** The connections and log the effects run with, and where each task's outcome is reported. */
export interface TaskContext {
  /** The worker's consumer group: whose attempt rows fence its database effects. */
  group: string;
  /** The worker's effect connections (ledger statements, claims, locks). */
  pool: pg.Pool;
  /** Drizzle over `pool`. */
  db: Database;
  /** Run first in each effect transaction (behind a transaction-mode pooler: `sql/transaction-settings.ts`). */
  transactionSettings: ledger.Statement | undefined;
  log: Logger;
  /** Records a task's outcome (metrics, a log line); called once per task. */
  finish(task: Task, outcome: Outcome, durationMs: number): void;
}

/** A database task's ref with its attempt's fence; a task of a recorded event always has one. */
export function fencedRef(task: Task): FencedDatabaseRef {
  const { attempt, receivedAt } = task.run;
  if (attempt === undefined || receivedAt === undefined) throw new Error('a task of an event not recorded');
  return { ...task.ref, attempt, receivedAt };
}

/** The log fields that name a task. */
export function bindings(task: Task): Record<string, string> {
  return { provider: task.event.provider, eventId: task.event.eventId, effect: task.effect.name };
}

/** What an effect's context has whatever its kind. */
export function contextBase(task: Task, log: Logger) {
  return {
    event: task.event,
    effect: task.effect.name,
    idempotencyKey: task.ref.idempotencyKey,
    attempt: task.run.job.retryCount + 1,
    log,
  };
}

/** What an effect's span says about it. */
export function spanAttributes(task: Task) {
  return { effect: task.effect.name, kind: task.effect.kind, attempt: task.run.job.retryCount + 1 };
}

export { keyOf } from '../event-key.ts';

export function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
