import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@webhook-inbox/db';
import { sql, type SQL } from 'drizzle-orm';
import type pg from 'pg';
import type { JobResult, JobWithMetadata } from 'pg-boss';
import type { Logger } from 'pino';
import { parseJsonLossless } from '../json.ts';
import type { EventJob } from '../queue.ts';
import { eventIdempotencyKey, scopedIdempotencyKey } from './keys.ts';
import * as ledger from './ledger.ts';
import type { EffectRegistry, RegisteredEffect } from './registry.ts';
import {
  PermanentEffectError,
  type DeadEvent,
  type EffectOutcome,
  type EffectStep,
  type InboxEventBase,
  type InboxObserver,
  type ShopifyInboxEvent,
} from './types.ts';

/** Where a step hook is called; `effect` is the effect about to run, just run, or committed. */
export interface StepInfo {
  provider: string;
  eventId: string;
  type: string;
  effect: string;
}

export interface RunnerOptions {
  pool: pg.Pool;
  db: Database;
  registry: EffectRegistry;
  logger: Logger;
  observer?: InboxObserver | undefined;
  /** Fires once per event that becomes `dead` (at least once: a crash right after may fire it again). */
  onDead?: ((event: DeadEvent) => void | Promise<void>) | undefined;
  /** Test-only fault injection at effect step boundaries. */
  onStep?: ((step: EffectStep, info: StepInfo) => void | Promise<void>) | undefined;
  /** How long an external effect waits for another holder of its key (same account, same event). */
  claimWaitMs?: number | undefined;
}

type Job = JobWithMetadata<EventJob>;

interface EventRun {
  job: Job;
  settlement?: ledger.Settlement;
  type: string;
  /** Effects committed by this attempt, for the `after-commit-before-complete` step. */
  committed: string[];
  permanent: boolean;
}

const SHOP_DOMAIN_HEADER = 'x-shopify-shop-domain';
const MARK_ATTEMPTS = 3;

/**
 * Runs the effects of a batch of event jobs: every effect not yet completed, each once, each on its own. A
 * database effect commits with its ledger row; an external effect is claimed before and marked right after.
 */
export class EffectRunner {
  readonly #pool: pg.Pool;
  readonly #db: Database;
  readonly #registry: EffectRegistry;
  readonly #log: Logger;
  readonly #observer: InboxObserver | undefined;
  readonly #onDead: RunnerOptions['onDead'];
  readonly #onStep: RunnerOptions['onStep'];
  readonly #claimWaitMs: number;

  constructor(options: RunnerOptions) {
    this.#pool = options.pool;
    this.#db = options.db;
    this.#registry = options.registry;
    this.#log = options.logger;
    this.#observer = options.observer;
    this.#onDead = options.onDead;
    this.#onStep = options.onStep;
    this.#claimWaitMs = options.claimWaitMs ?? 30_000;
  }

  /** The pg-boss handler (`perJobResults`): one result per job. Throws only when the database is unreachable. */
  async runBatch(jobs: readonly Job[]): Promise<JobResult[]> {
    const started = performance.now();
    const unique = new Map(jobs.map((job) => [keyOf(job.data.provider, job.data.eventId), job.data]));
    const { rows } = await this.#pool.query<ledger.LoadedEventRow>(
      ledger.startAttempts([...unique.values()]),
    );
    const loaded = new Map(rows.map((row) => [keyOf(row.provider, row.event_id), row]));

    const runs = await Promise.all(
      jobs.map((job) => this.#runEvent(job, loaded.get(keyOf(job.data.provider, job.data.eventId)))),
    );

    const settlements = runs.flatMap((run) => (run.settlement ? [run.settlement] : []));
    if (settlements.length > 0) {
      const { rows: settled } = await this.#pool.query<ledger.SettledRow>(ledger.settleEvents(settlements));
      await this.#reportSettled(settled);
    }

    if (this.#onStep) {
      for (const run of runs) {
        for (const effect of run.committed) {
          await this.#onStep('after-commit-before-complete', { ...run.job.data, type: run.type, effect });
        }
      }
    }
    this.#observer?.batch?.(jobs.length, performance.now() - started);
    return runs.map(({ job, settlement, permanent }): JobResult => {
      if (!settlement || settlement.status === 'processed') return { id: job.id, status: 'completed' };
      const output = { message: settlement.lastError };
      // `dead` is final whatever pg-boss's retry count says: straight to the dead-letter queue.
      return {
        id: job.id,
        status: settlement.status === 'dead' || permanent ? 'deadletter' : 'failed',
        output,
      };
    });
  }

  /**
   * The dead-letter queue's handler. Our own handler marks an event `dead` when its last attempt fails; a job can
   * also get here without that (the last attempt's worker died, or it timed out), and then this does it.
   */
  async runDeadLetters(jobs: readonly Job[]): Promise<void> {
    for (const job of jobs) {
      const reason =
        errorText(job.sourceOutput) ?? 'the last attempt did not finish (worker died or timed out)';
      const { rows } = await this.#pool.query<ledger.SettledRow>(ledger.markDead(job.data, reason));
      await this.#reportSettled(rows);
    }
  }

  async #runEvent(job: Job, row: ledger.LoadedEventRow | undefined): Promise<EventRun> {
    const { provider, eventId } = job.data;
    const run: EventRun = { job, type: row?.type ?? '', committed: [], permanent: false };
    if (!row) {
      // Purged by retention, or a job sent by hand: nothing to do, and nothing to retry.
      this.#log.warn({ provider, eventId }, 'job for an event that is not recorded; completing it');
      return run;
    }
    const effects = this.#registry.get(row.provider, row.type);
    const settle = (status: ledger.Settlement['status'], lastError: string | null) => {
      run.settlement = { provider, eventId, status, lastError };
      return run;
    };
    if (effects.length === 0) return settle('processed', null);

    let event: InboxEventBase;
    try {
      event = decodeEvent(row);
    } catch (error) {
      run.permanent = true;
      return settle('dead', `payload: ${describe(error)}`);
    }

    const completed = new Set(row.completed);
    const failures: string[] = [];
    const log = this.#log.child({ provider, eventId, type: row.type });
    for (const effect of effects) {
      if (completed.has(effect.name)) {
        this.#observe(effect, event, 'skipped', 0);
        continue;
      }
      const outcome =
        effect.kind === 'database'
          ? await this.#runDatabaseEffect(effect, event, job, log)
          : await this.#runExternalEffect(effect, event, job, log);
      if (outcome === 'completed') run.committed.push(effect.name);
      if (outcome instanceof Error) {
        failures.push(`${effect.name}: ${describe(outcome)}`);
        if (outcome instanceof PermanentEffectError) run.permanent = true;
      }
    }

    if (failures.length === 0) return settle('processed', null);
    const lastAttempt = job.retryCount >= job.retryLimit;
    return settle(run.permanent || lastAttempt ? 'dead' : 'failed', failures.join('; '));
  }

  async #runDatabaseEffect(
    effect: RegisteredEffect,
    event: InboxEventBase,
    job: Job,
    parentLog: Logger,
  ): Promise<'completed' | 'skipped' | Error> {
    const ref = this.#ref(effect, event);
    const log = parentLog.child({ effect: effect.name });
    const startedAt = new Date();
    const t0 = performance.now();
    try {
      await this.#step('before-effect', event, effect);
      const outcome = await this.#db.transaction(async (tx) => {
        const result = await tx.execute<{ claimed: boolean; fresh: boolean }>(
          toSql(ledger.recordDatabaseEffect(ref, ref.scoped)),
        );
        const claim = result.rows[0];
        if (!claim?.claimed) return 'skipped' as const;
        if (!claim.fresh) {
          log.info(
            { idempotencyKey: ref.idempotencyKey },
            'effect already done under its scope by another event',
          );
          return 'skipped' as const;
        }
        await effect.run({
          event,
          effect: effect.name,
          idempotencyKey: ref.idempotencyKey,
          attempt: job.retryCount + 1,
          log,
          tx,
        } as never);
        await this.#step('after-effect-before-commit', event, effect);
        return 'completed' as const;
      });
      const ms = performance.now() - t0;
      this.#observe(effect, event, outcome, ms);
      if (outcome === 'completed') log.info({ ms: Math.round(ms) }, 'effect completed');
      return outcome;
    } catch (error) {
      const failure = asError(error);
      this.#observe(effect, event, 'failed', performance.now() - t0, failure);
      log.warn({ err: failure, attempt: job.retryCount + 1 }, 'effect failed');
      await this.#pool
        .query(ledger.recordDatabaseFailure(ref, startedAt, describe(failure)))
        .catch((e: unknown) => log.error({ err: e }, 'could not record the failure in the ledger'));
      return failure;
    }
  }

  async #runExternalEffect(
    effect: RegisteredEffect,
    event: InboxEventBase,
    job: Job,
    parentLog: Logger,
  ): Promise<'completed' | 'skipped' | Error> {
    const ref = this.#ref(effect, event);
    const log = parentLog.child({ effect: effect.name });
    const t0 = performance.now();
    let client: pg.PoolClient | undefined;
    let broken = false;
    try {
      client = await this.#lock(ref.idempotencyKey);
      try {
        const claim = (await client.query<ledger.ClaimRow>(ledger.claimExternalEffect(ref))).rows[0];
        if (!claim?.run_claimed || claim.key_attempts === null) {
          if (claim?.run_claimed)
            log.info({ idempotencyKey: ref.idempotencyKey }, 'effect already done under its key');
          this.#observe(effect, event, 'skipped', performance.now() - t0);
          return 'skipped';
        }
        if (claim.prior_status === 'claimed') {
          log.warn(
            { idempotencyKey: ref.idempotencyKey, keyAttempts: claim.key_attempts },
            'an earlier claim of this effect never reported back (its worker died): running it again, so it may happen twice',
          );
        }
        await this.#step('before-effect', event, effect);
        try {
          await effect.run({
            event,
            effect: effect.name,
            idempotencyKey: ref.idempotencyKey,
            attempt: job.retryCount + 1,
            log,
            db: this.#db,
          } as never);
        } catch (error) {
          const failure = asError(error);
          this.#observe(effect, event, 'failed', performance.now() - t0, failure);
          log.warn({ err: failure, attempt: job.retryCount + 1 }, 'effect failed');
          await client.query(ledger.failExternalEffect(ref, describe(failure)));
          return failure;
        }
        await this.#step('after-effect-before-commit', event, effect);
        // The window in which a crash means "done but not known to be done": one statement, on a connection we
        // already hold. A hiccup here is retried rather than turned into a second send on the next attempt.
        await this.#markDone(client, ref, log);
      } finally {
        await client.query(ledger.unlockKey(ref.idempotencyKey)).catch(() => {
          broken = true; // Destroying the connection ends its session, and with it the lock.
        });
      }
      const ms = performance.now() - t0;
      this.#observe(effect, event, 'completed', ms);
      log.info({ ms: Math.round(ms) }, 'effect completed');
      return 'completed';
    } catch (error) {
      broken = true;
      const failure = asError(error);
      this.#observe(effect, event, 'failed', performance.now() - t0, failure);
      log.warn({ err: failure, attempt: job.retryCount + 1 }, 'effect failed');
      return failure;
    } finally {
      client?.release(broken);
    }
  }

  /**
   * A connection holding the key's advisory lock. Waiters do not hold a connection while they wait (they poll),
   * so many events of one account cannot starve the pool.
   */
  async #lock(idempotencyKey: string): Promise<pg.PoolClient> {
    const deadline = Date.now() + this.#claimWaitMs;
    for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
      const client = await this.#pool.connect();
      try {
        const { rows } = await client.query<{ locked: boolean }>(ledger.tryLockKey(idempotencyKey));
        if (rows[0]?.locked) return client;
        client.release();
      } catch (error) {
        client.release(true);
        throw error;
      }
      if (Date.now() > deadline)
        throw new Error(`another worker has held this effect's key for ${this.#claimWaitMs} ms`);
      await sleep(wait);
    }
  }

  async #markDone(client: pg.PoolClient, ref: ledger.EffectRef, log: Logger): Promise<void> {
    const statement = ledger.completeExternalEffect(ref);
    for (let attempt = 1; ; attempt++) {
      try {
        // After the first failure the held connection may be the problem: use a fresh one.
        await (attempt === 1 ? client.query(statement) : this.#pool.query(statement));
        return;
      } catch (error) {
        if (attempt >= MARK_ATTEMPTS) throw error;
        log.warn({ err: error }, 'could not mark the effect done; retrying');
        await sleep(50 * attempt);
      }
    }
  }

  #ref(effect: RegisteredEffect, event: InboxEventBase): ledger.EffectRef & { scoped: boolean } {
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

  async #step(step: EffectStep, event: InboxEventBase, effect: RegisteredEffect): Promise<void> {
    if (this.#onStep) {
      await this.#onStep(step, {
        provider: event.provider,
        eventId: event.eventId,
        type: event.type,
        effect: effect.name,
      });
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

function decodeEvent(row: ledger.LoadedEventRow): InboxEventBase {
  if (row.payload === null) throw new PermanentEffectError('the payload was purged by retention');
  const event: InboxEventBase = {
    provider: row.provider,
    eventId: row.event_id,
    type: row.type,
    headers: row.headers,
    receivedAt: row.received_at,
    payload: parseJsonLossless(row.payload),
  };
  if (row.provider === 'shopify') {
    const shopDomain = row.headers[SHOP_DOMAIN_HEADER] ?? row.event_id.split(':')[0] ?? '';
    const shopify: InboxEventBase & Pick<ShopifyInboxEvent, 'shopDomain'> = { ...event, shopDomain };
    return shopify;
  }
  return event;
}

function keyOf(provider: string, eventId: string): string {
  return `${provider}\0${eventId}`;
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** A short, single-line error for `last_error`: never a payload, never a stack. */
function describe(value: unknown): string {
  return errorText(value) ?? 'unknown error';
}

function errorText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  let message: unknown = value;
  if (typeof value === 'object' && 'message' in value) message = value.message;
  else if (typeof value === 'object' && 'value' in value) return errorText(value.value);
  const text = (typeof message === 'string' ? message : JSON.stringify(message)).replace(/\s+/g, ' ').trim();
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/** A `$n` statement as Drizzle SQL, to run it on a Drizzle transaction. */
function toSql({ text, values }: ledger.Statement): SQL {
  const chunks = text
    .split(/\$(\d+)/)
    .map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql.param(values[Number(part) - 1])));
  return sql.join(chunks);
}
