import type { Database } from '@webhook-inbox/db';
import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import type pg from 'pg';
import type { JobResult } from 'pg-boss';
import type { Logger } from 'pino';
import { errorLine } from '../error-text.ts';
import { attemptsOf, recordAttempts, type AttemptTiming } from './attempts.ts';
import { runDatabaseEffects } from './database-effects.ts';
import { decodeEvent } from './decode.ts';
import { runExternalEffects, type ExternalEffectsContext } from './external-effects.ts';
import { eventIdempotencyKey, scopedIdempotencyKey } from './keys.ts';
import type { DatabaseEffectRef } from '../sql/effect-runs.ts';
import * as ledger from '../sql/ledger.ts';
import type { EffectRegistry, RegisteredEffect } from './registry.ts';
import { startEventSpan, traceSkippedEffect } from '../telemetry.ts';
import { bindings, keyOf, spanAttributes, type EventRun, type Job, type Outcome, type Task } from './task.ts';
import {
  PermanentEffectError,
  type DeadEvent,
  type EffectOutcome,
  type InboxEventBase,
  type InboxObserver,
} from './types.ts';

export interface RunnerOptions {
  pool: pg.Pool;
  /** The worker's consumer group: whose status (`webhook_events`, or its `webhook_event_groups` rows) it keeps. */
  group?: string | undefined;
  db: Database;
  /** Run first in each effect transaction: the settings a transaction-mode pooler's connections cannot carry. */
  transactionSettings?: ledger.Statement | undefined;
  registry: EffectRegistry;
  logger: Logger;
  observer?: InboxObserver | undefined;
  /** Fires once per event that becomes `dead` (at least once: a crash right after may fire it again). */
  onDead?: ((event: DeadEvent) => void | Promise<void>) | undefined;
  /** How long an external effect waits for another holder of its key (same account, same event). */
  claimWaitMs?: number | undefined;
  /**
   * How long marking an external effect done is retried while the database connection fails (a restart, a
   * network cut), so that an email already sent is not sent again on the job's next attempt. Never past the
   * job's expiry (another worker may be running it by then), and not once the pool is being ended (shutdown).
   * Default 30 000 ms.
   */
  markRetryMs?: number | undefined;
}

/**
 * Runs the effects of a batch of event jobs: every effect not yet completed, each once, each on its own. It plans
 * the batch (which effects of which events are left), hands the database effects to `database-effects.ts` (run
 * first, in the transactions that record them) and then the external ones to `external-effects.ts` (claimed,
 * run, marked), and settles every event in one statement.
 */
export class EffectRunner {
  readonly #pool: pg.Pool;
  readonly #group: string;
  readonly #registry: EffectRegistry;
  readonly #log: Logger;
  readonly #observer: InboxObserver | undefined;
  readonly #onDead: RunnerOptions['onDead'];
  /** What the effect modules run tasks with; external effects need their waits too. */
  readonly #tasks: ExternalEffectsContext;
  /** When each task of the batches in flight ended: their attempt history. */
  readonly #timings = new WeakMap<object, AttemptTiming>();

  constructor(options: RunnerOptions) {
    this.#pool = options.pool;
    this.#group = options.group ?? DEFAULT_GROUP;
    this.#registry = options.registry;
    this.#log = options.logger;
    this.#observer = options.observer;
    this.#onDead = options.onDead;
    this.#tasks = {
      pool: options.pool,
      group: this.#group,
      db: options.db,
      transactionSettings: options.transactionSettings,
      log: options.logger,
      finish: (task, outcome, durationMs) => this.#finish(task, outcome, durationMs),
      claimWaitMs: options.claimWaitMs ?? 30_000,
      markRetryMs: options.markRetryMs ?? 30_000,
    };
  }

  /** The pg-boss handler (`perJobResults`): one result per job. Throws only when the database is unreachable. */
  async runBatch(jobs: readonly Job[]): Promise<JobResult[]> {
    const started = performance.now();
    const fetchedAt = Date.now();
    const unique = new Map(jobs.map((job) => [keyOf(job.data.provider, job.data.eventId), job.data]));
    const { rows } = await this.#pool.query<ledger.LoadedEventRow>(
      ledger.startAttempts([...unique.values()], this.#group),
    );
    const loaded = new Map(rows.map((row) => [keyOf(row.provider, row.event_id), row]));

    const primaries = new Map<string, EventRun>();
    const runs = jobs.map((job) => {
      const key = keyOf(job.data.provider, job.data.eventId);
      const primary = primaries.get(key);
      if (primary)
        return { job, expiresAt: primary.expiresAt, shadowOf: primary, permanent: false, tasks: [] };
      const run = this.#plan(job, loaded.get(key), expiryOf(job, fetchedAt));
      primaries.set(key, run);
      return run;
    });
    try {
      const tasks = runs.flatMap((run) => run.tasks);

      await runDatabaseEffects(
        this.#tasks,
        tasks.filter((task) => task.effect.kind === 'database'),
      );
      await runExternalEffects(
        this.#tasks,
        tasks.filter((task) => task.effect.kind === 'external'),
      );

      for (const run of runs) if (!run.settlement && !run.shadowOf) this.#conclude(run);
      await recordAttempts(this.#pool, attemptsOf(runs, this.#timings), this.#log);
      const settlements = runs.flatMap((run) => (run.settlement ? [run.settlement] : []));
      if (settlements.length > 0) {
        const { rows: answered } = await this.#pool.query<ledger.SettleRow>(
          ledger.settleEvents(settlements, this.#group),
        );
        adoptLedgerVerdicts(runs, answered);
        await this.#reportSettled(answered.map(asReported));
      }
    } catch (error) {
      // The database failed us: the jobs go back to pg-boss as they are, and their spans say so.
      for (const run of runs) run.span?.end('failed');
      throw error;
    }
    for (const run of runs) run.span?.end(run.settlement?.status ?? 'processed');
    this.#observer?.batch?.(jobs.length, performance.now() - started);
    return runs.map((run): JobResult => {
      const { settlement, permanent } = run.shadowOf ?? run;
      if (!settlement || settlement.status === 'processed') return { id: run.job.id, status: 'completed' };
      // `dead` is final whatever pg-boss's retry count says: straight to the dead-letter queue.
      const status = settlement.status === 'dead' || permanent ? 'deadletter' : 'failed';
      return { id: run.job.id, status, output: { message: settlement.lastError } };
    });
  }

  /**
   * The dead-letter queue's handler. Our own handler marks an event `dead` when its last attempt fails; a job can
   * also get here without that (the last attempt's worker died, or it timed out), and then this does it.
   */
  async runDeadLetters(jobs: readonly Job[]): Promise<void> {
    for (const job of jobs) {
      const reason =
        job.sourceOutput == null
          ? 'the last attempt did not finish (worker died or timed out)'
          : errorLine(job.sourceOutput);
      const { rows } = await this.#pool.query<ledger.SettledRow>(
        ledger.markDead(job.data, reason, this.#group),
      );
      await this.#reportSettled(rows);
    }
  }

  /** What this attempt of an event has to do: its effects not completed yet, or a settlement right away. */
  #plan(job: Job, row: ledger.LoadedEventRow | undefined, expiresAt: number): EventRun {
    const { provider, eventId } = job.data;
    const span = startEventSpan({
      provider,
      eventId,
      type: row?.type,
      trace: job.data.trace,
      replayOf: job.data.replayOf,
      jobId: job.id,
      attempt: job.retryCount + 1,
    });
    const run: EventRun = { job, expiresAt, permanent: false, tasks: [], span };
    if (!row) {
      // Purged by retention, or a job sent by hand (or, for another group, without the group's row): nothing to
      // do, and nothing to retry.
      this.#log.warn({ provider, eventId }, 'job for an event that is not recorded; completing it');
      return run;
    }
    const receivedAt = row.received_at;
    const attempt = row.attempts;
    run.receivedAt = receivedAt;
    run.attempt = attempt;
    const effects = this.#registry.get(row.provider, row.type);
    run.effects = effects.map((effect) => effect.name);
    if (effects.length === 0) {
      run.settlement = { provider, eventId, receivedAt, attempt, status: 'processed', lastError: null };
      return run;
    }
    let event: InboxEventBase;
    try {
      event = decodeEvent(row);
    } catch (error) {
      run.permanent = true;
      run.settlement = {
        provider,
        eventId,
        receivedAt,
        attempt,
        status: 'dead',
        lastError: `payload: ${errorLine(error)}`,
      };
      return run;
    }
    const completed = new Set(row.completed);
    for (const effect of effects) {
      const task: Task = { run, event, effect, ref: refOf(effect, event) };
      if (completed.has(effect.name)) {
        this.#observe(effect, event, 'skipped', 0);
        traceSkippedEffect(span, spanAttributes(task));
        continue;
      }
      run.tasks.push(task);
    }
    return run;
  }

  /** Settles an event from its tasks' outcomes. */
  #conclude(run: EventRun): void {
    const failures: string[] = [];
    for (const task of run.tasks) {
      if (!(task.outcome instanceof Error)) continue;
      failures.push(`${task.effect.name}: ${errorLine(task.outcome)}`);
      if (task.outcome instanceof PermanentEffectError) run.permanent = true;
    }
    const { provider, eventId } = run.job.data;
    const { receivedAt, attempt } = run;
    // No row when the attempt started (retention purged it, or a failover lost it): nothing to settle, and a row
    // recorded under the key since is another event's to settle.
    if (receivedAt === undefined || attempt === undefined) return;
    if (failures.length === 0) {
      run.settlement = {
        provider,
        eventId,
        receivedAt,
        attempt,
        status: 'processed',
        lastError: null,
        effects: run.effects,
      };
      return;
    }
    const lastAttempt = run.job.retryCount >= run.job.retryLimit;
    run.settlement = {
      provider,
      eventId,
      receivedAt,
      attempt,
      status: run.permanent || lastAttempt ? 'dead' : 'failed',
      lastError: failures.join('; '),
    };
  }

  // ---- reporting --------------------------------------------------------------------------------------------

  /** Records a task's outcome: metrics, and a log line per completed or failed effect. */
  #finish(task: Task, outcome: Outcome, durationMs: number): void {
    task.outcome = outcome;
    this.#timings.set(task, { finishedAt: new Date(), durationMs });
    // Run effects have their span already; one found done when claimed gets one saying so.
    if (outcome === 'skipped') traceSkippedEffect(task.run.span, spanAttributes(task));
    const failed = outcome instanceof Error;
    this.#observe(
      task.effect,
      task.event,
      failed ? 'failed' : outcome,
      durationMs,
      failed ? outcome : undefined,
    );
    if (failed) {
      this.#log.warn(
        { ...bindings(task), attempt: task.run.job.retryCount + 1, err: outcome },
        'effect failed',
      );
    } else if (outcome === 'completed') {
      // Debug, not info: an event's line at info is its outcome ("event processed"); an effect's time is in the
      // metrics (`webhook_effect_duration_seconds`), and three lines more per event cost the worker a few % of its CPU.
      this.#log.debug({ ...bindings(task), ms: Math.round(durationMs) }, 'effect completed');
    }
  }

  #observe(
    effect: RegisteredEffect,
    event: InboxEventBase,
    status: EffectOutcome['status'],
    durationMs: number,
    error?: Error,
  ): void {
    this.#observer?.effect?.({
      provider: event.provider,
      type: event.type,
      effect: effect.name,
      kind: effect.kind,
      status,
      durationMs,
      error,
    });
  }

  async #reportSettled(rows: readonly ledger.SettledRow[]): Promise<void> {
    for (const row of rows) {
      this.#observer?.event?.({
        provider: row.provider,
        eventId: row.event_id,
        type: row.type,
        group: this.#group,
        status: row.status,
        latencyMs: Date.now() - row.received_at.getTime(),
      });
      const log = {
        provider: row.provider,
        eventId: row.event_id,
        type: row.type,
        attempts: row.attempts,
        ...(this.#group === DEFAULT_GROUP ? {} : { group: this.#group }),
      };
      if (row.status === 'processed') {
        this.#log.info(log, 'event processed');
      } else if (row.status === 'failed') {
        this.#log.warn({ ...log, lastError: row.last_error }, 'event failed; it will be retried');
      } else if (row.status === 'dead') {
        this.#log.error({ ...log, lastError: row.last_error }, 'event is dead: no more retries');
        try {
          await this.#onDead?.({
            provider: row.provider,
            eventId: row.event_id,
            type: row.type,
            lastError: row.last_error,
            attempts: row.attempts,
            group: this.#group,
          });
        } catch (error) {
          this.#log.error({ err: error, ...log }, 'onDead hook failed');
        }
      }
    }
  }
}

/**
 * The settlements `settleEvents` turned down end `failed`, so that pg-boss retries their jobs: a `processed` one
 * whose effects the ledger it settled on lacks (the statement left the event `failed`), and any but `dead` whose
 * start that database does not know (`start_lost`: the row was left as it was).
 */
function adoptLedgerVerdicts(runs: readonly EventRun[], answered: readonly ledger.SettleRow[]): void {
  const turnedDown = new Map(
    answered
      .filter((row) => row.start_lost || row.status === 'failed')
      .map((row) => [keyOf(row.provider, row.event_id), row]),
  );
  for (const run of runs) {
    const { settlement } = run;
    if (!settlement || settlement.status === 'dead') continue;
    const row = turnedDown.get(keyOf(settlement.provider, settlement.eventId));
    if (!row) continue;
    if (row.start_lost)
      run.settlement = { ...settlement, status: 'failed', lastError: ledger.ATTEMPT_START_LOST };
    else if (settlement.status === 'processed')
      run.settlement = { ...settlement, status: 'failed', lastError: row.last_error };
  }
}

/** A lost start is reported as what the attempt became: `failed`, to be retried (`adoptLedgerVerdicts`). */
function asReported(row: ledger.SettleRow): ledger.SettledRow {
  return row.start_lost ? { ...row, status: 'failed', last_error: ledger.ATTEMPT_START_LOST } : row;
}

function refOf(effect: RegisteredEffect, event: InboxEventBase): DatabaseEffectRef {
  const scope = effect.scope?.(event as never);
  return {
    provider: event.provider,
    eventId: event.eventId,
    effect: effect.name,
    idempotencyKey:
      scope === undefined
        ? eventIdempotencyKey(event.provider, event.eventId, effect.name)
        : scopedIdempotencyKey(effect.name, scope),
    scoped: scope !== undefined,
  };
}

/**
 * When the job expires: `expireInSeconds` after it started. `startedOn` is the database's clock and `fetchedAt`
 * (after the start, by a round trip) this host's; the earlier of the two, so a skewed clock cannot push it later.
 */
function expiryOf(job: Job, fetchedAt: number): number {
  const startedOn = job.startedOn instanceof Date ? job.startedOn.getTime() : Number.NaN;
  const start = Number.isFinite(startedOn) ? Math.min(startedOn, fetchedAt) : fetchedAt;
  const expireMs = job.expireInSeconds * 1000;
  return Number.isFinite(expireMs) ? start + expireMs : Number.POSITIVE_INFINITY;
}
