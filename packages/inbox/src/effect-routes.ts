import pg from 'pg';
import { keyOf } from './event-key.ts';
import { DEFAULT_GROUP, validateGroup } from './queue.ts';
import type { EffectLookup } from './replay.ts';
import { effectRoutes } from './sql/index.ts';
import type { EffectRouteRow, RecordedRouteRow } from './sql/effect-routes.ts';

/**
 * The one list of the effects that exist: each consumer group's worker records the effects it registered
 * (`effect_routes`) when it starts, and everything that needs to know them without running the product's code
 * reads that record: the receiver (which groups a new event goes to), replays (CLI, admin API, console) and
 * Stripe reconciliation.
 */

/**
 * An effect name another consumer group already registered for the same event type: the ledger is keyed by
 * (event, effect), so two groups with one name would each find the other's run completed.
 */
export class EffectRouteConflictError extends Error {
  readonly conflicts: RecordedRouteRow[];
  constructor(group: string, conflicts: RecordedRouteRow[]) {
    const list = conflicts
      .map((c) => `${c.provider} ${c.eventType} ${c.effect} (group "${c.consumerGroup}")`)
      .join(', ');
    super(
      `consumer group "${group}" registers effects that another group already registered: ${list}. Effect names ` +
        'must be unique per event type across groups (the effect ledger is keyed by event and effect name): ' +
        'rename the effect in one of the groups',
    );
    this.name = 'EffectRouteConflictError';
    this.conflicts = conflicts;
  }
}

/** How long another group's route replacement waits for its lock, and how often it tries. */
export interface RouteLockOptions {
  /** The longest the receivers are held back by one try. Default 2 000 ms. */
  lockTimeoutMs?: number;
  /** Tries before the start fails. Default 10. */
  attempts?: number;
}

// lock_not_available: `lock_timeout` ran out.
const LOCK_TIMEOUT = '55P03';

/**
 * Replaces the routes recorded for `group` (default: the default group) with `routes`, in one transaction; the
 * other groups' routes stay. Throws `EffectRouteConflictError`, recording nothing, when another group has
 * registered one of the same effect names for the same event type.
 *
 * Another group than the default waits for its table lock at most `lockTimeoutMs` per try: while it waits, every
 * receiver's insert queues behind it, so a transaction that holds the table for long (an open `psql` session)
 * must not stop the receivers. Between tries they go on; after the last, the start fails and says why.
 */
export async function recordEffectRoutes(
  pool: pg.Pool,
  routes: readonly EffectRouteRow[],
  group: string = DEFAULT_GROUP,
  { lockTimeoutMs = 2_000, attempts = 10 }: RouteLockOptions = {},
): Promise<void> {
  validateGroup(group);
  for (let attempt = 1; ; attempt++) {
    try {
      await replaceRoutes(pool, routes, group, group === DEFAULT_GROUP ? undefined : lockTimeoutMs);
      return;
    } catch (error) {
      const timedOut = error instanceof pg.DatabaseError && error.code === LOCK_TIMEOUT;
      if (!timedOut) throw error;
      if (attempt >= attempts) {
        throw new Error(
          `consumer group "${group}" could not record its routes: effect_routes stayed locked by another ` +
            `transaction through ${attempts} tries of ${lockTimeoutMs} ms (look for a long transaction in ` +
            'pg_stat_activity that read effect_routes)',
          { cause: error },
        );
      }
      // Let the receivers held back by this try through before the next.
      await new Promise((resolve) => setTimeout(resolve, Math.min(lockTimeoutMs, 1_000)));
    }
  }
}

async function replaceRoutes(
  pool: pg.Pool,
  routes: readonly EffectRouteRow[],
  group: string,
  lockTimeoutMs: number | undefined,
): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    if (lockTimeoutMs !== undefined) await client.query(effectRoutes.setLockTimeout(lockTimeoutMs));
    await client.query(effectRoutes.lockEffectRoutes(group, DEFAULT_GROUP));
    if (routes.length > 0) {
      const conflicts = await client.query<RecordedRouteRow>(
        effectRoutes.selectConflictingRoutes(routes, group),
      );
      if (conflicts.rows.length > 0) throw new EffectRouteConflictError(group, conflicts.rows);
    }
    await client.query(effectRoutes.deleteEffectRoutes(group));
    if (routes.length > 0) await client.query(effectRoutes.insertEffectRoutes(routes, group));
    await client.query('commit');
  } catch (error) {
    broken =
      !(error instanceof EffectRouteConflictError) &&
      !(error instanceof pg.DatabaseError && error.code === LOCK_TIMEOUT);
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * The routes recorded for `group` (default: the default group), as rows. Empty when no worker of that group has
 * started on the database yet.
 */
export async function readEffectRoutes(
  pool: pg.Pool,
  group: string = DEFAULT_GROUP,
): Promise<EffectRouteRow[]> {
  const { rows } = await pool.query<RecordedRouteRow>(effectRoutes.selectEffectRoutes(group));
  return rows.map(({ consumerGroup: _, ...route }) => route);
}

/** Every group's recorded routes, each with its group. */
export async function readAllEffectRoutes(pool: pg.Pool): Promise<RecordedRouteRow[]> {
  return (await pool.query<RecordedRouteRow>(effectRoutes.selectEffectRoutes())).rows;
}

/**
 * The routes recorded for `group` as a replay's lookup (names in the order they run), or `undefined` when none
 * are recorded: a replay then re-enqueues and leaves the choice to the worker's ledger, instead of concluding
 * from an empty record that nothing is left to run.
 */
export async function loadEffectLookup(
  pool: pg.Pool,
  group: string = DEFAULT_GROUP,
): Promise<EffectLookup | undefined> {
  const routes = await readEffectRoutes(pool, group);
  if (routes.length === 0) return undefined;
  const byType = new Map<string, string[]>();
  for (const route of routes) {
    const key = keyOf(route.provider, route.eventType);
    byType.set(key, [...(byType.get(key) ?? []), route.effect]);
  }
  return (provider, type) => byType.get(keyOf(provider, type)) ?? [];
}

/** The event types of `provider` that have at least one recorded effect, in any group. */
export async function recordedEventTypes(pool: pg.Pool, provider: string): Promise<string[]> {
  const routes = await readAllEffectRoutes(pool);
  return [...new Set(routes.filter((route) => route.provider === provider).map((route) => route.eventType))];
}
