import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@webhook-inbox/db';
import { sql, type SQL } from 'drizzle-orm';
import type pg from 'pg';
import type { JobResult, JobWithMetadata } from 'pg-boss';
import type { Logger } from 'pino';
import type { EventJob } from '../queue.ts';
import { errorFields, errorLine } from '../error-text.ts';
import { isConnectionError } from './connection-errors.ts';
import { decodeEvent } from './decode.ts';
import { eventIdempotencyKey, scopedIdempotencyKey } from './keys.ts';
import * as ledger from './ledger.ts';
import type { EffectRegistry, RegisteredEffect } from './registry.ts';
import {
  PermanentEffectError,
  type DeadEvent,
  type EffectOutcome,
  type InboxEventBase,
  type InboxObserver,
  type Tx,
} from './types.ts';

export interface RunnerOptions {
  pool: pg.Pool;
  db: Database;
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

type Job = JobWithMetadata<EventJob>;
type Outcome = 'completed' | 'skipped' | Error;

/** One event of the batch. */
interface EventRun {
  job: Job;
  /** When pg-boss will consider this attempt's worker gone and let another worker retry the job (ms epoch). */
  expiresAt: number;
  settlement?: ledger.Settlement;
  /** Another job of the same batch for the same event: it ends as that one does and runs nothing itself. */
  shadowOf?: EventRun;
  permanent: boolean;
  tasks: Task[];
}

/** One effect of one event to run in this attempt. */
interface Task {
  run: EventRun;
  event: InboxEventBase;
  effect: RegisteredEffect;
  ref: ledger.DatabaseEffectRef;
  outcome?: Outcome;
}

// A batch's database effects commit in at most this many transactions, of at least this many events each.
const TRANSACTIONS_PER_BATCH = 4;
const EVENTS_PER_TRANSACTION = 8;
// Marking an external effect done, through a connection failure: waits of 100 ms doubling up to 2 s between
// attempts; the last attempt starts no later than this margin before the job expires.
const MARK_FIRST_DELAY_MS = 100;
const MARK_MAX_DELAY_MS = 2_000;
const MARK_EXPIRY_MARGIN_MS = 1_000;

/**
 * Runs the effects of a batch of event jobs: every effect not yet completed, each once, each on its own.
 *
 * Database effects of the batch run first, in ONE transaction that also writes their ledger rows (one commit for
 * the batch, not one per effect). If any of them fails, that transaction is rolled back and they run again one by
 * one, each in its own transaction with its ledger row, so a failure stays with its effect. External effects run
 * next, concurrently: claimed (committed) before, marked right after, each under its key's advisory lock.
 */
export class EffectRunner {
  readonly #pool: pg.Pool;
  readonly #db: Database;
  readonly #registry: EffectRegistry;
  readonly #log: Logger;
  readonly #observer: InboxObserver | undefined;
  readonly #onDead: RunnerOptions['onDead'];
  readonly #claimWaitMs: number;
  readonly #markRetryMs: number;

  constructor(options: RunnerOptions) {
    this.#pool = options.pool;
    this.#db = options.db;
    this.#registry = options.registry;
    this.#log = options.logger;
    this.#observer = options.observer;
    this.#onDead = options.onDead;
    this.#claimWaitMs = options.claimWaitMs ?? 30_000;
    this.#markRetryMs = options.markRetryMs ?? 30_000;
  }

  /** The pg-boss handler (`perJobResults`): one result per job. Throws only when the database is unreachable. */
  async runBatch(jobs: readonly Job[]): Promise<JobResult[]> {
    const started = performance.now();
    const fetchedAt = Date.now();
    const unique = new Map(jobs.map((job) => [keyOf(job.data.provider, job.data.eventId), job.data]));
    const { rows } = await this.#pool.query<ledger.LoadedEventRow>(
      ledger.startAttempts([...unique.values()]),
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
    const tasks = runs.flatMap((run) => run.tasks);

    await this.#runDatabaseEffects(tasks.filter((task) => task.effect.kind === 'database'));
    await this.#runExternalEffects(tasks.filter((task) => task.effect.kind === 'external'));

    for (const run of runs) if (!run.settlement && !run.shadowOf) this.#conclude(run);
    const settlements = runs.flatMap((run) => (run.settlement ? [run.settlement] : []));
    if (settlements.length > 0) {
      const { rows: settled } = await this.#pool.query<ledger.SettledRow>(ledger.settleEvents(settlements));
      await this.#reportSettled(settled);
    }

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
      const { rows } = await this.#pool.query<ledger.SettledRow>(ledger.markDead(job.data, reason));
      await this.#reportSettled(rows);
    }
  }

  /** What this attempt of an event has to do: its effects not completed yet, or a settlement right away. */
  #plan(job: Job, row: ledger.LoadedEventRow | undefined, expiresAt: number): EventRun {
    const run: EventRun = { job, expiresAt, permanent: false, tasks: [] };
    const { provider, eventId } = job.data;
    if (!row) {
      // Purged by retention, or a job sent by hand: nothing to do, and nothing to retry.
      this.#log.warn({ provider, eventId }, 'job for an event that is not recorded; completing it');
      return run;
    }
    const effects = this.#registry.get(row.provider, row.type);
    if (effects.length === 0) {
      run.settlement = { provider, eventId, status: 'processed', lastError: null };
      return run;
    }
    let event: InboxEventBase;
    try {
      event = decodeEvent(row);
    } catch (error) {
      run.permanent = true;
      run.settlement = { provider, eventId, status: 'dead', lastError: `payload: ${errorLine(error)}` };
      return run;
    }
    const completed = new Set(row.completed);
    for (const effect of effects) {
      if (completed.has(effect.name)) {
        this.#observe(effect, event, 'skipped', 0);
        continue;
      }
      run.tasks.push({ run, event, effect, ref: refOf(effect, event) });
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
    if (failures.length === 0) {
      run.settlement = { provider, eventId, status: 'processed', lastError: null };
      return;
    }
    const lastAttempt = run.job.retryCount >= run.job.retryLimit;
    run.settlement = {
      provider,
      eventId,
      status: run.permanent || lastAttempt ? 'dead' : 'failed',
      lastError: failures.join('; '),
    };
  }

  // ---- database effects -------------------------------------------------------------------------------------

  async #runDatabaseEffects(tasks: Task[]): Promise<void> {
    if (tasks.length === 0) return;
    // A few transactions side by side rather than one long one: each is a chain of round trips.
    const events = [...groupBy(tasks, (task) => task.run).values()];
    const size = Math.max(EVENTS_PER_TRANSACTION, Math.ceil(events.length / TRANSACTIONS_PER_BATCH));
    const chunks: Task[][] = [];
    for (let i = 0; i < events.length; i += size) chunks.push(events.slice(i, i + size).flat());
    await Promise.all(chunks.map((chunk) => this.#runDatabaseChunk(chunk)));
  }

  async #runDatabaseChunk(tasks: Task[]): Promise<void> {
    const failure = await this.#runDatabaseBatch(tasks);
    if (!failure) return;
    // The transaction rolled back. The effect that failed keeps its failure (it is not run twice in one attempt);
    // the others run again one by one: events in parallel, the effects of one event in order.
    let rest = tasks;
    if (failure.culprit) {
      await this.#recordDatabaseFailure(failure.culprit, new Date(), failure.error, failure.ms);
      rest = tasks.filter((task) => task !== failure.culprit);
    }
    await Promise.all(
      [...groupBy(rest, (task) => task.run).values()].map(async (eventTasks) => {
        for (const task of eventTasks) await this.#runDatabaseEffect(task);
      }),
    );
  }

  /**
   * All database effects of the batch in one transaction, with their ledger rows. Undefined when it committed;
   * else what failed (everything rolled back, nothing recorded) and, when an effect threw, which one.
   */
  async #runDatabaseBatch(
    tasks: Task[],
  ): Promise<{ culprit: Task | undefined; error: Error; ms: number } | undefined> {
    const outcomes = new Map<Task, { outcome: 'completed' | 'skipped'; ms: number }>();
    let current: Task | undefined;
    let t0 = 0;
    try {
      await this.#db.transaction(async (tx) => {
        const { rows } = await tx.execute<ledger.DatabaseClaimRow>(
          toSql(ledger.claimDatabaseEffects(tasks.map((task) => task.ref))),
        );
        const claims = new Map(rows.map((row) => [keyOf(row.provider, row.event_id, row.effect), row.fresh]));
        const scopesUsed = new Set<string>();
        for (const task of tasks) {
          const fresh = claims.get(keyOf(task.ref.provider, task.ref.eventId, task.ref.effect));
          // Two events of one scope in this batch: the first runs, the second finds it done.
          const scopeTaken = task.ref.scoped && scopesUsed.has(task.ref.idempotencyKey);
          if (fresh === undefined || !fresh || scopeTaken) {
            outcomes.set(task, { outcome: 'skipped', ms: 0 });
            continue;
          }
          if (task.ref.scoped) scopesUsed.add(task.ref.idempotencyKey);
          current = task;
          t0 = performance.now();
          await task.effect.run(this.#databaseContext(task, tx));
          outcomes.set(task, { outcome: 'completed', ms: performance.now() - t0 });
          current = undefined;
        }
      });
    } catch (error) {
      return { culprit: current, error: asError(error), ms: current ? performance.now() - t0 : 0 };
    }
    for (const [task, { outcome, ms }] of outcomes) this.#finish(task, outcome, ms);
    return undefined;
  }

  /** One database effect in its own transaction with its ledger row. */
  async #runDatabaseEffect(task: Task): Promise<void> {
    const startedAt = new Date();
    const t0 = performance.now();
    try {
      const outcome = await this.#db.transaction(async (tx) => {
        const { rows } = await tx.execute<ledger.DatabaseClaimRow>(
          toSql(ledger.claimDatabaseEffects([task.ref])),
        );
        if (!rows[0]?.fresh) return 'skipped' as const;
        await task.effect.run(this.#databaseContext(task, tx));
        return 'completed' as const;
      });
      this.#finish(task, outcome, performance.now() - t0);
    } catch (error) {
      await this.#recordDatabaseFailure(task, startedAt, asError(error), performance.now() - t0);
    }
  }

  async #recordDatabaseFailure(task: Task, startedAt: Date, failure: Error, ms: number): Promise<void> {
    this.#finish(task, failure, ms);
    await this.#pool
      .query(ledger.recordDatabaseFailure(task.ref, startedAt, errorLine(failure)))
      .catch((e: unknown) =>
        this.#log.error({ err: e, ...bindings(task) }, 'could not record the failure in the ledger'),
      );
  }

  #databaseContext(task: Task, tx: Tx): never {
    return {
      event: task.event,
      effect: task.effect.name,
      idempotencyKey: task.ref.idempotencyKey,
      attempt: task.run.job.retryCount + 1,
      log: this.#log.child(bindings(task)),
      tx,
    } as never;
  }

  // ---- external effects -------------------------------------------------------------------------------------

  /** Concurrently, at most one task per key at a time (two events of one account in one batch run in turn). */
  async #runExternalEffects(tasks: Task[]): Promise<void> {
    let pending = tasks;
    while (pending.length > 0) {
      const keys = new Set<string>();
      const round: Task[] = [];
      const later: Task[] = [];
      for (const task of pending) {
        if (keys.has(task.ref.idempotencyKey)) later.push(task);
        else {
          keys.add(task.ref.idempotencyKey);
          round.push(task);
        }
      }
      await this.#runExternalRound(round);
      pending = later;
    }
  }

  /**
   * One connection holds the advisory locks of the round's keys and carries their claims and marks; a key held
   * elsewhere (another worker on the same account) is waited for on its own. The round's keys are unlocked as soon
   * as their own effects are done, not once the waits are over: a connection that kept them while this round
   * waited for another key could be what the holder of that key is waiting for (two rounds each holding a key the
   * other wants), and both would wait until `claimWaitMs` gave out.
   */
  async #runExternalRound(tasks: Task[]): Promise<void> {
    const client = await this.#pool.connect();
    let locked: string[];
    try {
      const keys = tasks.map((task) => task.ref.idempotencyKey);
      locked = (await client.query<{ key: string }>(ledger.tryLockKeys(keys))).rows.map((row) => row.key);
    } catch (error) {
      // The locks could not be taken: nothing was claimed, nothing ran.
      client.release(true);
      for (const task of tasks) this.#finish(task, asError(error), 0);
      return;
    }
    const mine = new Set(locked);
    const ours = tasks.filter((task) => mine.has(task.ref.idempotencyKey));
    const busy = tasks.filter((task) => !mine.has(task.ref.idempotencyKey));
    await Promise.all([
      // A key whose claim is still held by another attempt is waited for like a key locked elsewhere.
      this.#runLocked(client, locked, ours).then((held) =>
        Promise.all(held.map((task) => this.#runExternalAlone(task))),
      ),
      ...busy.map((task) => this.#runExternalAlone(task)),
    ]);
  }

  /**
   * Claims, runs and marks the tasks whose keys `client` has locked, then unlocks them and releases it. Returns
   * the tasks it could not claim because another attempt's claim still holds their key.
   */
  async #runLocked(client: pg.PoolClient, locked: string[], tasks: Task[]): Promise<Task[]> {
    let broken = false;
    const held: Task[] = [];
    try {
      if (tasks.length === 0) return held;
      const claims = await client.query<ledger.ExternalClaimRow>(
        ledger.claimExternalEffects(tasks.map(claimRefOf)),
      );
      const byKey = new Map(claims.rows.map((row) => [row.key, row]));
      // Marks go out as their sends finish, pipelined on this connection. Each task ends on its own: one that
      // fails must not end the round while the others are still sending or retrying their marks.
      await Promise.all(
        tasks.map(async (task) => {
          const claim = byKey.get(task.ref.idempotencyKey);
          if (claim?.held_until) {
            held.push(task);
            return;
          }
          try {
            await this.#runClaimed(task, claim, client);
          } catch (error) {
            broken = true;
            if (!task.outcome) this.#finish(task, asError(error), 0);
          }
        }),
      );
    } catch (error) {
      broken = true;
      for (const task of tasks) if (!task.outcome) this.#finish(task, asError(error), 0);
    } finally {
      if (locked.length > 0) {
        await client.query(ledger.unlockKeys(locked)).catch(() => {
          broken = true; // Destroying the connection ends its session, and with it the locks.
        });
      }
      client.release(broken);
    }
    return held;
  }

  /** An external effect whose key is busy elsewhere: claimed once it is free (or found done), then run. */
  async #runExternalAlone(task: Task): Promise<void> {
    let client: pg.PoolClient | undefined;
    let broken = false;
    try {
      let claim: ledger.ExternalClaimRow | undefined;
      ({ client, claim } = await this.#claimWhenFree(task));
      try {
        await this.#runClaimed(task, claim, client);
      } finally {
        await client.query(ledger.unlockKeys([task.ref.idempotencyKey])).catch(() => {
          broken = true;
        });
      }
    } catch (error) {
      broken = true;
      if (!task.outcome) this.#finish(task, asError(error), 0);
    } finally {
      client?.release(broken);
    }
  }

  /** Runs a claimed external effect and marks it, on the connection that holds its key. */
  async #runClaimed(
    task: Task,
    claim: ledger.ExternalClaimRow | undefined,
    client: pg.PoolClient,
  ): Promise<void> {
    if (!claim?.run_claimed || claim.key_attempts === null) {
      if (claim?.run_claimed) this.#log.info(bindings(task), 'effect already done under its key');
      this.#finish(task, 'skipped', 0);
      return;
    }
    const log = this.#log.child(bindings(task));
    if (claim.prior_status === 'claimed') {
      log.warn(
        { keyAttempts: claim.key_attempts },
        'an earlier claim of this effect never reported back (its worker died): running it again, so it may happen twice',
      );
    }
    const t0 = performance.now();
    try {
      await task.effect.run({
        event: task.event,
        effect: task.effect.name,
        idempotencyKey: task.ref.idempotencyKey,
        attempt: task.run.job.retryCount + 1,
        log,
        db: this.#db,
      } as never);
    } catch (error) {
      const failure = asError(error);
      this.#finish(task, failure, performance.now() - t0);
      await client.query(ledger.failExternalEffect(task.ref, errorLine(failure)));
      return;
    }
    // The window in which a crash means "done but not known to be done": one statement, on a connection we
    // already hold, committed without waiting for a disk flush. A connection failure here is retried (for up to
    // `markRetryMs`) rather than turned into a second send on the next attempt.
    try {
      await this.#markDone(client, task);
    } catch (error) {
      // Given up: whether it happened is unknown. Stop holding the key, if the database lets us, so the next
      // attempt runs it again (may happen twice) rather than wait for this job's expiry.
      await this.#pool.query(ledger.releaseClaim(task.ref)).catch(() => undefined);
      throw error;
    }
    this.#finish(task, 'completed', performance.now() - t0);
  }

  /**
   * A connection holding the key's advisory lock, with the key claimed on it. A key is busy while another worker
   * has it locked, or while an attempt whose session ended may still be marking it done (its claim holds it):
   * waiters poll, holding no connection in between, so many events of one account cannot starve the pool; they
   * give up after `claimWaitMs`.
   */
  async #claimWhenFree(
    task: Task,
  ): Promise<{ client: pg.PoolClient; claim: ledger.ExternalClaimRow | undefined }> {
    const key = task.ref.idempotencyKey;
    const deadline = Date.now() + this.#claimWaitMs;
    let heldUntil: Date | undefined;
    for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
      const client = await this.#pool.connect();
      try {
        if ((await client.query(ledger.tryLockKeys([key]))).rows.length > 0) {
          const { rows } = await client.query<ledger.ExternalClaimRow>(
            ledger.claimExternalEffects([claimRefOf(task)]),
          );
          const claim = rows[0];
          if (!claim?.held_until) return { client, claim };
          await client.query(ledger.unlockKeys([key]));
          if (!heldUntil) {
            this.#log.info(
              { ...bindings(task), heldUntil: claim.held_until.toISOString() },
              'effect claimed by another attempt that may still be marking it done; waiting',
            );
          }
          heldUntil = claim.held_until;
        }
        client.release();
      } catch (error) {
        client.release(true);
        throw error;
      }
      if (Date.now() > deadline) {
        throw new Error(
          heldUntil
            ? `another attempt has held this effect's claim for ${this.#claimWaitMs} ms (until ${heldUntil.toISOString()})`
            : `another worker has held this effect's key for ${this.#claimWaitMs} ms`,
        );
      }
      await sleep(wait);
    }
  }

  /**
   * Marks an external effect done. The first attempt uses the connection that holds the key's lock; when the
   * connection fails, the mark is retried on fresh connections with backoff until it lands, `markRetryMs` has
   * passed, the job is about to expire, or the pool is being ended. Any other error is not retried.
   */
  async #markDone(client: pg.PoolClient, task: Task): Promise<void> {
    const statement = ledger.completeExternalEffect(task.ref);
    const started = Date.now();
    const deadline = Math.min(started + this.#markRetryMs, task.run.expiresAt - MARK_EXPIRY_MARGIN_MS);
    for (let attempt = 1; ; attempt++) {
      try {
        // After the first failure the held connection is the problem: use a fresh one.
        await (attempt === 1 ? client.query(statement) : this.#pool.query(statement));
        if (attempt > 1) {
          this.#log.info(
            { ...bindings(task), attempts: attempt, ms: Date.now() - started },
            'effect marked done after the database came back',
          );
        }
        return;
      } catch (error) {
        const wait = Math.min(MARK_FIRST_DELAY_MS * 2 ** (attempt - 1), MARK_MAX_DELAY_MS);
        const left = deadline - Date.now();
        if (!isConnectionError(error) || this.#pool.ending || left <= 0) throw error;
        // Never the statement's values: the error's message and code only.
        this.#log.warn(
          {
            ...bindings(task),
            attempt,
            retryInMs: Math.min(wait, left),
            err: errorFields(error),
          },
          'could not mark the effect done (database connection); retrying',
        );
        if (!(await this.#pause(Math.min(wait, left)))) throw error;
      }
    }
  }

  /** Sleeps, waking early when the pool is being ended (shutdown). False then. */
  async #pause(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    for (let left = ms; left > 0; left = until - Date.now()) {
      if (this.#pool.ending) return false;
      await sleep(Math.min(left, 100));
    }
    return !this.#pool.ending;
  }

  // ---- reporting --------------------------------------------------------------------------------------------

  /** Records a task's outcome: metrics, and a log line per completed or failed effect. */
  #finish(task: Task, outcome: Outcome, durationMs: number): void {
    task.outcome = outcome;
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
      this.#log.info({ ...bindings(task), ms: Math.round(durationMs) }, 'effect completed');
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
        status: row.status,
        latencyMs: Date.now() - row.received_at.getTime(),
      });
      const log = { provider: row.provider, eventId: row.event_id, type: row.type, attempts: row.attempts };
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
          });
        } catch (error) {
          this.#log.error({ err: error, ...log }, 'onDead hook failed');
        }
      }
    }
  }
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function refOf(effect: RegisteredEffect, event: InboxEventBase): ledger.DatabaseEffectRef {
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

/** The task's key, claimed until its job expires (see `claimExternalEffects`). */
function claimRefOf(task: Task): ledger.ExternalEffectRef {
  const expires = task.run.expiresAt;
  return { ...task.ref, claimExpiresAt: Number.isFinite(expires) ? new Date(expires) : null };
}

function bindings(task: Task): Record<string, string> {
  return { provider: task.event.provider, eventId: task.event.eventId, effect: task.effect.name };
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

function keyOf(...parts: string[]): string {
  return parts.join('\0');
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** A `$n` statement as Drizzle SQL, to run it on a Drizzle transaction. */
function toSql({ text, values }: ledger.Statement): SQL {
  const chunks = text
    .split(/\$(\d+)/)
    .map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql.param(values[Number(part) - 1])));
  return sql.join(chunks);
}
