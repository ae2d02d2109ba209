/**
 * External effects (an email, an HTTP call): nothing can commit atomically with them, so each is claimed
 * (committed) before it runs and marked done right after. A claim is a lease on the effect's idempotency key, as
 * long as its job's heartbeat (`claimLeaseMs`), and its attempt renews it until the mark has landed, so another
 * attempt or another event of the same key waits rather than run it too, however long the effect takes; a worker
 * that dies or freezes stops renewing, and its keys are free by the time pg-boss has noticed the silent heartbeat
 * and retried the job. It happens at least once, and twice only if the process dies (or freezes past the lease)
 * between the start of the call and the mark (or the mark cannot land: see `markDone`).
 *
 * A claim is also a fence (`lease.ts`): right before the effect's call (and again where the effect calls
 * `holdLease`), the attempt proves its claim is still its own and unexpired; a worker that froze past its lease
 * and thawed finds it taken, runs nothing, and its marks change nothing (`../sql/idempotency-keys.ts`).
 *
 * Leases are rows, not locks of a database session: nothing outlives a statement, so it works the same behind a
 * transaction-mode pooler, and a worker that waits holds no connection and no key.
 *
 * A batch's external tasks run concurrently in rounds of distinct keys. One connection per round carries the
 * round's claims and marks (one statement claims the round; the marks of the effects that end together go out as
 * one statement: `marks.ts`); a key claimed elsewhere is polled for on its own, holding no connection in between.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { errorFields, errorLine } from '../error-text.ts';
import { isConnectionError } from './connection-errors.ts';
import { effectLogger } from './effect-log.ts';
import * as idempotencyKeys from '../sql/idempotency-keys.ts';
import { Lease } from './lease.ts';
import { MarkQueue } from './marks.ts';
import { traceEffect } from '../telemetry.ts';
import { asError, bindings, contextBase, spanAttributes, type Task, type TaskContext } from './task.ts';
import { LeaseLostError, type ExternalEffectContext } from './types.ts';

export interface ExternalEffectsContext extends TaskContext {
  /** How long a task waits for another holder of its key (same account, same event). */
  claimWaitMs: number;
  /** How long marking a task done is retried while the database connection fails. */
  markRetryMs: number;
}

// Marking an external effect done, through a connection failure: waits of 100 ms doubling up to 2 s between
// attempts; the last attempt starts no later than this margin before the job expires.
const MARK_FIRST_DELAY_MS = 100;
const MARK_MAX_DELAY_MS = 2_000;
const MARK_EXPIRY_MARGIN_MS = 1_000;

// A claim's lease when its job has neither heartbeat nor expiry: pg-boss's default job expiry.
const DEFAULT_LEASE_MS = 15 * 60_000;

/** A claim as the claiming statement answered it, and when (performance.now()) that statement was sent. */
interface ClaimAnswer {
  row: idempotencyKeys.ExternalClaimRow | undefined;
  sentAt: number;
}

/**
 * Runs the external tasks of a batch, concurrently, at most one task per key at a time (two events of one
 * account in one batch run in turn). Each task ends with an outcome reported through `ctx.finish`.
 */
export async function runExternalEffects(ctx: ExternalEffectsContext, tasks: Task[]): Promise<void> {
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
    await runRound(ctx, round);
    pending = later;
  }
}

/**
 * One statement claims the round's keys; the claimed tasks run and are marked on that connection, while each
 * task whose key is held elsewhere (another worker on the same account, or an attempt that may still be marking
 * it done) is waited for on its own.
 */
async function runRound(ctx: ExternalEffectsContext, tasks: Task[]): Promise<void> {
  const client = await ctx.pool.connect();
  let answers: Map<string, idempotencyKeys.ExternalClaimRow>;
  const sentAt = performance.now();
  try {
    const { rows } = await client.query<idempotencyKeys.ExternalClaimRow>(
      idempotencyKeys.claimExternalEffects(tasks.map(claimRefOf)),
    );
    answers = new Map(rows.map((row) => [row.key, row]));
  } catch (error) {
    // Nothing was claimed, nothing ran.
    client.release(true);
    for (const task of tasks) ctx.finish(task, asError(error), 0);
    return;
  }
  const mine: Task[] = [];
  const held: Task[] = [];
  for (const task of tasks) (answers.get(task.ref.idempotencyKey)?.held_until ? held : mine).push(task);
  await Promise.all([
    runOnClient(ctx, client, mine, answers, sentAt),
    ...held.map((task) => runWhenFree(ctx, task)),
  ]);
}

/** Runs and marks the tasks claimed on `client`, then releases it. */
async function runOnClient(
  ctx: ExternalEffectsContext,
  client: pg.PoolClient,
  tasks: Task[],
  answers: Map<string, idempotencyKeys.ExternalClaimRow>,
  sentAt: number,
): Promise<void> {
  let broken = false;
  // Marks go out as their sends finish, together on this connection. Each task ends on its own: one that fails
  // must not end the round while the others are still sending or retrying their marks.
  const marks = new MarkQueue(client);
  await Promise.all(
    tasks.map(async (task) => {
      try {
        await runClaimed(ctx, task, { row: answers.get(task.ref.idempotencyKey), sentAt }, marks);
      } catch (error) {
        broken = true;
        if (!task.outcome) ctx.finish(task, asError(error), 0);
      }
    }),
  );
  client.release(broken);
}

/** A task whose key is held elsewhere: claimed once it is free (or found done), then run. */
async function runWhenFree(ctx: ExternalEffectsContext, task: Task): Promise<void> {
  let client: pg.PoolClient | undefined;
  let broken = false;
  try {
    let claim: ClaimAnswer;
    ({ client, claim } = await claimWhenFree(ctx, task));
    await runClaimed(ctx, task, claim, new MarkQueue(client));
  } catch (error) {
    broken = true;
    if (!task.outcome) ctx.finish(task, asError(error), 0);
  } finally {
    client?.release(broken);
  }
}

/**
 * A connection with the task's key claimed (or found done) on it. Waiters poll, holding no connection in
 * between, so many events of one account cannot starve the pool; they give up after `claimWaitMs`.
 */
async function claimWhenFree(
  ctx: ExternalEffectsContext,
  task: Task,
): Promise<{ client: pg.PoolClient; claim: ClaimAnswer }> {
  const deadline = Date.now() + ctx.claimWaitMs;
  let heldUntil: Date | undefined;
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    const client = await ctx.pool.connect();
    let claim: idempotencyKeys.ExternalClaimRow | undefined;
    const sentAt = performance.now();
    try {
      ({
        rows: [claim],
      } = await client.query<idempotencyKeys.ExternalClaimRow>(
        idempotencyKeys.claimExternalEffects([claimRefOf(task)]),
      ));
    } catch (error) {
      client.release(true);
      throw error;
    }
    if (!claim?.held_until) return { client, claim: { row: claim, sentAt } };
    client.release();
    if (!heldUntil) {
      ctx.log.info(
        { ...bindings(task), heldUntil: claim.held_until.toISOString() },
        'effect claimed by another attempt that may still be running it or marking it done; waiting',
      );
    }
    heldUntil = claim.held_until;
    if (Date.now() > deadline) {
      throw new Error(
        `another attempt has held this effect's claim for ${ctx.claimWaitMs} ms (until ${heldUntil.toISOString()})`,
      );
    }
    await sleep(wait);
  }
}

/**
 * Runs a claimed task and marks it, on the connection that claimed it: right before the call, the attempt proves
 * its claim is still its own (`Lease.hold`); one that lost it runs nothing and writes nothing.
 */
async function runClaimed(
  ctx: ExternalEffectsContext,
  task: Task,
  { row: claim, sentAt }: ClaimAnswer,
  marks: MarkQueue,
): Promise<void> {
  if (!claim?.run_claimed || claim.key_attempts === null || claim.claim_token === null) {
    if (claim?.run_claimed) ctx.log.info(bindings(task), 'effect already done under its key');
    ctx.finish(task, 'skipped', 0);
    return;
  }
  const log = effectLogger(ctx.log, task);
  if (claim.prior_status === 'claimed') {
    log.warn(
      { keyAttempts: claim.key_attempts },
      'an earlier claim of this effect never reported back (its worker died): running it again, so it may happen twice',
    );
  }
  const t0 = performance.now();
  const fence = { keyAttempts: claim.key_attempts, token: claim.claim_token };
  const lease = new Lease(ctx.pool, task.ref, fence, claimLeaseMs(task.run.job), sentAt, log);
  // Renewed until the mark has landed: a mark retried through a database outage still holds the key.
  lease.renewWhileHeld();
  try {
    try {
      await lease.hold();
      // `db` is the worker's pool, not `client`: this connection carries the round's other claims and marks.
      const context: ExternalEffectContext<unknown> = {
        ...contextBase(task, log),
        db: ctx.db,
        holdLease: () => lease.hold(),
      };
      await traceEffect(task.run.span, spanAttributes(task), async () => task.effect.run(context as never));
    } catch (error) {
      const failure = asError(error);
      ctx.finish(task, failure, performance.now() - t0);
      if (failure instanceof LeaseLostError) {
        log.warn({ keyAttempts: fence.keyAttempts }, 'lost the claim of the effect before its call: not run');
        return;
      }
      await marks.client.query(idempotencyKeys.failExternalEffect(task.ref, fence, errorLine(failure)));
      return;
    }
    // The window in which a crash means "done but not known to be done": one statement, on a connection we
    // already hold, shared with the marks ready at the same time. A connection failure here is retried (for up to
    // `markRetryMs`) rather than turned into a second send on the next attempt.
    try {
      await markDone(ctx, marks, task, fence);
    } catch (error) {
      // Given up: whether it happened is unknown. Stop holding the key, if the database lets us, so the next
      // attempt runs it again (may happen twice) rather than wait for the lease to run out.
      lease.stop();
      await ctx.pool.query(idempotencyKeys.releaseClaim(task.ref, fence)).catch(() => undefined);
      throw error;
    }
  } finally {
    lease.stop();
  }
  ctx.finish(task, 'completed', performance.now() - t0);
}

/**
 * Marks a task done. The first attempt goes with the marks of its round, on the connection that claimed it; when
 * the connection fails, the mark is retried on fresh connections with backoff until it lands, `markRetryMs` has passed, the
 * job is about to expire (another worker may be running it by then), or the pool is being ended (shutdown).
 * Any other error is not retried.
 */
async function markDone(
  ctx: ExternalEffectsContext,
  marks: MarkQueue,
  task: Task,
  fence: idempotencyKeys.ClaimFence,
): Promise<void> {
  const started = Date.now();
  const deadline = Math.min(started + ctx.markRetryMs, task.run.expiresAt - MARK_EXPIRY_MARGIN_MS);
  for (let attempt = 1; ; attempt++) {
    try {
      // After the first failure the held connection is the problem: use a fresh one.
      const marked =
        attempt === 1
          ? await marks.mark(task.ref, fence)
          : ((await ctx.pool.query(idempotencyKeys.completeExternalEffect(task.ref, fence))).rowCount ?? 0) >
            0;
      if (!marked) {
        // The call ran while the claim was this attempt's; the claim was taken before the mark (a freeze, or the
        // database away past the lease, mid-call): the new holder marks the key, and may run the effect too.
        ctx.log.warn(
          bindings(task),
          'effect ran, but its claim was taken before the mark: it may happen twice',
        );
      }
      if (attempt > 1) {
        ctx.log.info(
          { ...bindings(task), attempts: attempt, ms: Date.now() - started },
          'effect marked done after the database came back',
        );
      }
      return;
    } catch (error) {
      const wait = Math.min(MARK_FIRST_DELAY_MS * 2 ** (attempt - 1), MARK_MAX_DELAY_MS);
      const left = deadline - Date.now();
      if (!isConnectionError(error) || ctx.pool.ending || left <= 0) throw error;
      // Never the statement's values: the error's message and code only.
      ctx.log.warn(
        { ...bindings(task), attempt, retryInMs: Math.min(wait, left), err: errorFields(error) },
        'could not mark the effect done (database connection); retrying',
      );
      if (!(await pause(ctx.pool, Math.min(wait, left)))) throw error;
    }
  }
}

/** Sleeps, waking early when the pool is being ended (shutdown). False then. */
async function pause(pool: pg.Pool, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (let left = ms; left > 0; left = until - Date.now()) {
    if (pool.ending) return false;
    await sleep(Math.min(left, 100));
  }
  return !pool.ending;
}

/**
 * How long a claim holds its key without renewal: its job's heartbeat, the time pg-boss gives a silent worker
 * before it retries the job elsewhere; the job's expiry when that is shorter or there is no heartbeat. A retry
 * of the job of a worker that died finds its keys free, and a live worker, renewing, keeps them.
 */
export function claimLeaseMs(job: Pick<Task['run']['job'], 'heartbeatSeconds' | 'expireInSeconds'>): number {
  const seconds = Math.min(job.heartbeatSeconds || Number.POSITIVE_INFINITY, job.expireInSeconds);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_LEASE_MS;
}

/** The task's key, claimed for its job's lease from the database's now (see `claimExternalEffects`). */
function claimRefOf(task: Task): idempotencyKeys.ExternalEffectRef {
  return { ...task.ref, leaseMs: claimLeaseMs(task.run.job) };
}
