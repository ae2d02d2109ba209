/**
 * Database effects: each runs in the same transaction as its ledger row, so it commits exactly once.
 *
 * Each transaction is fenced to its events' attempts: the claim of their ledger rows share-locks the events' rows
 * where the attempt is still the latest (`effectRuns.claimDatabaseEffects`), so no other attempt can start before it
 * commits; an event another attempt took over (this worker froze or was cut off past its heartbeat) has nothing
 * claimed and nothing run (`LeaseLostError`), and its failure is not recorded over the new attempt's ledger.
 *
 * A batch's database effects run first in a few transactions that also write their ledger rows (a few commits
 * for the batch, not one per effect). When one of them fails, its transaction rolls back and its effects run
 * again one by one, each in its own transaction with its ledger row, so a failure stays with its effect.
 */
import { transactionClient } from '@webhook-inbox/db';
import { errorLine } from '../error-text.ts';
import * as effectRuns from '../sql/effect-runs.ts';
import { effectLogger } from './effect-log.ts';
import type { Statement } from '../sql/statement.ts';
import { traceEffect } from '../telemetry.ts';
import {
  asError,
  bindings,
  contextBase,
  fencedRef,
  keyOf,
  spanAttributes,
  type Task,
  type TaskContext,
} from './task.ts';
import { LeaseLostError, type DatabaseEffectContext, type Tx } from './types.ts';

const TAKEN_OVER =
  'another attempt of the event started (this one was taken over): its effects were not run here';

// A batch's database effects commit in at most this many transactions, of at least this many events each.
const TRANSACTIONS_PER_BATCH = 4;
const EVENTS_PER_TRANSACTION = 8;

/** Runs the database tasks of a batch; each task ends with an outcome reported through `ctx.finish`. */
export async function runDatabaseEffects(ctx: TaskContext, tasks: Task[]): Promise<void> {
  if (tasks.length === 0) return;
  // A few transactions side by side rather than one long one: each is a chain of round trips.
  const events = [...groupBy(tasks, (task) => task.run).values()];
  const size = Math.max(EVENTS_PER_TRANSACTION, Math.ceil(events.length / TRANSACTIONS_PER_BATCH));
  const chunks: Task[][] = [];
  for (let i = 0; i < events.length; i += size) chunks.push(events.slice(i, i + size).flat());
  await Promise.all(chunks.map((chunk) => runChunk(ctx, chunk)));
}

async function runChunk(ctx: TaskContext, tasks: Task[]): Promise<void> {
  const failure = await runTogether(ctx, tasks);
  if (!failure) return;
  // The transaction rolled back. The effect that failed keeps its failure (it is not run twice in one attempt);
  // the others run again one by one: events in parallel, the effects of one event in order.
  let rest = tasks;
  if (failure.culprit) {
    await recordFailure(ctx, failure.culprit, new Date(), failure.error, failure.ms);
    rest = tasks.filter((task) => task !== failure.culprit);
  }
  await Promise.all(
    [...groupBy(rest, (task) => task.run).values()].map(async (eventTasks) => {
      for (const task of eventTasks) await runAlone(ctx, task);
    }),
  );
}

/**
 * The tasks in one transaction, with their ledger rows. Undefined when it committed; else what failed
 * (everything rolled back, nothing recorded) and, when an effect threw, which one.
 */
async function runTogether(
  ctx: TaskContext,
  tasks: Task[],
): Promise<{ culprit: Task | undefined; error: Error; ms: number } | undefined> {
  const outcomes = new Map<Task, { outcome: 'completed' | 'skipped' | Error; ms: number }>();
  let current: Task | undefined;
  let t0 = 0;
  try {
    await transaction(ctx, async (tx) => {
      const rows = await query<effectRuns.DatabaseClaimRow>(
        tx,
        effectRuns.claimDatabaseEffects(tasks.map(fencedRef), ctx.group),
      );
      const claims = new Map(
        rows.map((row) => [keyOf(row.provider, row.event_id, row.effect ?? ''), row.fresh]),
      );
      const lost = new Set(rows.filter((row) => !row.held).map((row) => keyOf(row.provider, row.event_id)));
      const scopesUsed = new Set<string>();
      for (const task of tasks) {
        if (lost.has(keyOf(task.ref.provider, task.ref.eventId))) {
          outcomes.set(task, { outcome: new LeaseLostError(TAKEN_OVER), ms: 0 });
          continue;
        }
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
        await traceEffect(task.run.span, spanAttributes(task), async () =>
          task.effect.run(effectContext(ctx, task, tx)),
        );
        outcomes.set(task, { outcome: 'completed', ms: performance.now() - t0 });
        current = undefined;
      }
    });
  } catch (error) {
    return { culprit: current, error: asError(error), ms: current ? performance.now() - t0 : 0 };
  }
  for (const [task, { outcome, ms }] of outcomes) ctx.finish(task, outcome, ms);
  return undefined;
}

/** One task in its own transaction with its ledger row. */
async function runAlone(ctx: TaskContext, task: Task): Promise<void> {
  const startedAt = new Date();
  const t0 = performance.now();
  try {
    const outcome = await transaction(ctx, async (tx) => {
      const rows = await query<effectRuns.DatabaseClaimRow>(
        tx,
        effectRuns.claimDatabaseEffects([fencedRef(task)], ctx.group),
      );
      if (rows[0]?.held === false) return new LeaseLostError(TAKEN_OVER);
      if (!rows[0]?.fresh) return 'skipped' as const;
      await traceEffect(task.run.span, spanAttributes(task), async () =>
        task.effect.run(effectContext(ctx, task, tx)),
      );
      return 'completed' as const;
    });
    ctx.finish(task, outcome, performance.now() - t0);
  } catch (error) {
    await recordFailure(ctx, task, startedAt, asError(error), performance.now() - t0);
  }
}

/**
 * A transaction on the effects' connections, with the settings their sessions cannot carry (a pooler's). `ctx.db`
 * is `createDb`'s: a transaction whose BEGIN fails still gives its connection back.
 */
function transaction<T>(ctx: TaskContext, work: (tx: Tx) => Promise<T>): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    if (ctx.transactionSettings) await query(tx, ctx.transactionSettings);
    return work(tx);
  });
}

/** A failed task: reported, and recorded in the ledger outside the transaction that rolled back. */
async function recordFailure(
  ctx: TaskContext,
  task: Task,
  startedAt: Date,
  failure: Error,
  ms: number,
): Promise<void> {
  ctx.finish(task, failure, ms);
  await ctx.pool
    .query(effectRuns.recordDatabaseFailure(fencedRef(task), startedAt, errorLine(failure), ctx.group))
    .catch((e: unknown) =>
      ctx.log.error({ err: e, ...bindings(task) }, 'could not record the failure in the ledger'),
    );
}

function effectContext(ctx: TaskContext, task: Task, tx: Tx): never {
  const context: DatabaseEffectContext<unknown> = {
    ...contextBase(task, effectLogger(ctx.log, task)),
    tx,
  };
  return context as never;
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

/**
 * A ledger statement inside an effect transaction, on its connection as pg takes it: a named one is parsed and
 * planned once per connection (behind a transaction-mode pooler, the pool's client sends it unnamed).
 */
async function query<R extends Record<string, unknown>>(tx: Tx, statement: Statement): Promise<R[]> {
  return (await transactionClient(tx).query<R>(statement)).rows;
}
