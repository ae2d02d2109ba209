/**
 * External effects (an email, an HTTP call): nothing can commit atomically with them, so each is claimed
 * (committed) before it runs and marked done right after, under its idempotency key's advisory lock. It happens
 * at least once, and twice only if the process dies between the two (or the mark cannot land: see `markDone`).
 *
 * A batch's external tasks run concurrently in rounds of distinct keys. One connection per round holds the
 * round's locks and carries its claims and marks; a key busy elsewhere (another worker's lock, or a claim an
 * attempt may still be marking done) is polled for on its own, holding no connection in between.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { errorFields, errorLine } from '../error-text.ts';
import { isConnectionError } from './connection-errors.ts';
import * as ledger from './ledger.ts';
import { traceEffect } from '../telemetry.ts';
import { asError, bindings, contextBase, spanAttributes, type Task, type TaskContext } from './task.ts';
import type { ExternalEffectContext } from './types.ts';

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
 * One connection holds the advisory locks of the round's keys and carries their claims and marks; a key held
 * elsewhere (another worker on the same account) is waited for on its own. The round's keys are unlocked as soon
 * as their own effects are done, not once the waits are over: a connection that kept them while this round
 * waited for another key could be what the holder of that key is waiting for (two rounds each holding a key the
 * other wants), and both would wait until `claimWaitMs` gave out.
 */
async function runRound(ctx: ExternalEffectsContext, tasks: Task[]): Promise<void> {
  const client = await ctx.pool.connect();
  let locked: string[];
  try {
    const keys = tasks.map((task) => task.ref.idempotencyKey);
    locked = (await client.query<{ key: string }>(ledger.tryLockKeys(keys))).rows.map((row) => row.key);
  } catch (error) {
    // The locks could not be taken: nothing was claimed, nothing ran.
    client.release(true);
    for (const task of tasks) ctx.finish(task, asError(error), 0);
    return;
  }
  const mine = new Set(locked);
  const ours = tasks.filter((task) => mine.has(task.ref.idempotencyKey));
  const busy = tasks.filter((task) => !mine.has(task.ref.idempotencyKey));
  await Promise.all([
    // A key whose claim is still held by another attempt is waited for like a key locked elsewhere.
    runLocked(ctx, client, locked, ours).then((held) =>
      Promise.all(held.map((task) => runWhenFree(ctx, task))),
    ),
    ...busy.map((task) => runWhenFree(ctx, task)),
  ]);
}

/**
 * Claims, runs and marks the tasks whose keys `client` has locked, then unlocks them and releases it. Returns
 * the tasks it could not claim because another attempt's claim still holds their key.
 */
async function runLocked(
  ctx: ExternalEffectsContext,
  client: pg.PoolClient,
  locked: string[],
  tasks: Task[],
): Promise<Task[]> {
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
          await runClaimed(ctx, task, claim, client);
        } catch (error) {
          broken = true;
          if (!task.outcome) ctx.finish(task, asError(error), 0);
        }
      }),
    );
  } catch (error) {
    broken = true;
    for (const task of tasks) if (!task.outcome) ctx.finish(task, asError(error), 0);
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

/** A task whose key is busy elsewhere: claimed once it is free (or found done), then run. */
async function runWhenFree(ctx: ExternalEffectsContext, task: Task): Promise<void> {
  let client: pg.PoolClient | undefined;
  let broken = false;
  try {
    let claim: ledger.ExternalClaimRow | undefined;
    ({ client, claim } = await claimWhenFree(ctx, task));
    try {
      await runClaimed(ctx, task, claim, client);
    } finally {
      await client.query(ledger.unlockKeys([task.ref.idempotencyKey])).catch(() => {
        broken = true;
      });
    }
  } catch (error) {
    broken = true;
    if (!task.outcome) ctx.finish(task, asError(error), 0);
  } finally {
    client?.release(broken);
  }
}

/**
 * A connection holding the key's advisory lock, with the key claimed on it. A key is busy while another worker
 * has it locked, or while an attempt whose session ended may still be marking it done (its claim holds it):
 * waiters poll, holding no connection in between, so many events of one account cannot starve the pool; they
 * give up after `claimWaitMs`.
 */
async function claimWhenFree(
  ctx: ExternalEffectsContext,
  task: Task,
): Promise<{ client: pg.PoolClient; claim: ledger.ExternalClaimRow | undefined }> {
  const key = task.ref.idempotencyKey;
  const deadline = Date.now() + ctx.claimWaitMs;
  let heldUntil: Date | undefined;
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    const client = await ctx.pool.connect();
    try {
      if ((await client.query(ledger.tryLockKeys([key]))).rows.length > 0) {
        const { rows } = await client.query<ledger.ExternalClaimRow>(
          ledger.claimExternalEffects([claimRefOf(task)]),
        );
        const claim = rows[0];
        if (!claim?.held_until) return { client, claim };
        await client.query(ledger.unlockKeys([key]));
        if (!heldUntil) {
          ctx.log.info(
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
          ? `another attempt has held this effect's claim for ${ctx.claimWaitMs} ms (until ${heldUntil.toISOString()})`
          : `another worker has held this effect's key for ${ctx.claimWaitMs} ms`,
      );
    }
    await sleep(wait);
  }
}

/** Runs a claimed task and marks it, on the connection that holds its key. */
async function runClaimed(
  ctx: ExternalEffectsContext,
  task: Task,
  claim: ledger.ExternalClaimRow | undefined,
  client: pg.PoolClient,
): Promise<void> {
  if (!claim?.run_claimed || claim.key_attempts === null) {
    if (claim?.run_claimed) ctx.log.info(bindings(task), 'effect already done under its key');
    ctx.finish(task, 'skipped', 0);
    return;
  }
  const log = ctx.log.child(bindings(task));
  if (claim.prior_status === 'claimed') {
    log.warn(
      { keyAttempts: claim.key_attempts },
      'an earlier claim of this effect never reported back (its worker died): running it again, so it may happen twice',
    );
  }
  const t0 = performance.now();
  try {
    // `db` is the worker's pool, not `client`: this connection carries the round's other claims and marks.
    const context: ExternalEffectContext<unknown> = { ...contextBase(task, log), db: ctx.db };
    await traceEffect(task.run.span, spanAttributes(task), async () => task.effect.run(context as never));
  } catch (error) {
    const failure = asError(error);
    ctx.finish(task, failure, performance.now() - t0);
    await client.query(ledger.failExternalEffect(task.ref, errorLine(failure)));
    return;
  }
  // The window in which a crash means "done but not known to be done": one statement, on a connection we
  // already hold, committed without waiting for a disk flush. A connection failure here is retried (for up to
  // `markRetryMs`) rather than turned into a second send on the next attempt.
  try {
    await markDone(ctx, client, task);
  } catch (error) {
    // Given up: whether it happened is unknown. Stop holding the key, if the database lets us, so the next
    // attempt runs it again (may happen twice) rather than wait for this job's expiry.
    await ctx.pool.query(ledger.releaseClaim(task.ref)).catch(() => undefined);
    throw error;
  }
  ctx.finish(task, 'completed', performance.now() - t0);
}

/**
 * Marks a task done. The first attempt uses the connection that holds the key's lock; when the connection
 * fails, the mark is retried on fresh connections with backoff until it lands, `markRetryMs` has passed, the
 * job is about to expire (another worker may be running it by then), or the pool is being ended (shutdown).
 * Any other error is not retried.
 */
async function markDone(ctx: ExternalEffectsContext, client: pg.PoolClient, task: Task): Promise<void> {
  const statement = ledger.completeExternalEffect(task.ref);
  const started = Date.now();
  const deadline = Math.min(started + ctx.markRetryMs, task.run.expiresAt - MARK_EXPIRY_MARGIN_MS);
  for (let attempt = 1; ; attempt++) {
    try {
      // After the first failure the held connection is the problem: use a fresh one.
      await (attempt === 1 ? client.query(statement) : ctx.pool.query(statement));
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

/** The task's key, claimed until its job expires (see `claimExternalEffects`). */
function claimRefOf(task: Task): ledger.ExternalEffectRef {
  const expires = task.run.expiresAt;
  return { ...task.ref, claimExpiresAt: Number.isFinite(expires) ? new Date(expires) : null };
}
