import type pg from 'pg';
import { keyOf } from './event-key.ts';
import { DEFAULT_GROUP, validateGroup } from './queue.ts';
import { effectRoutes } from './sql/index.ts';
import { inTransaction } from './transaction.ts';
import type { EffectRouteRow, RecordedRouteRow } from './sql/effect-routes.ts';

/** Which effects are registered for an event type (the product's inbox knows; the database does not). */
export type EffectLookup = (provider: string, type: string) => readonly string[];

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

/**
 * Replaces the routes recorded for `group` (default: the default group) with `routes`, in one transaction; the
 * other groups' routes stay. Throws `EffectRouteConflictError`, recording nothing, when another group has
 * registered one of the same effect names for the same event type.
 *
 * Its table lock (`lockEffectRoutes`) orders the workers that start at once and never holds back a receiver's
 * insert, nor waits for a reader such as `pg_dump`: a worker starts however long a dump runs.
 */
export async function recordEffectRoutes(
  pool: pg.Pool,
  routes: readonly EffectRouteRow[],
  group: string = DEFAULT_GROUP,
): Promise<void> {
  validateGroup(group);
  await inTransaction(
    pool,
    async (client) => {
      await client.query(effectRoutes.lockEffectRoutes());
      if (routes.length > 0) {
        const conflicts = await client.query<RecordedRouteRow>(
          effectRoutes.selectConflictingRoutes(routes, group),
        );
        if (conflicts.rows.length > 0) throw new EffectRouteConflictError(group, conflicts.rows);
      }
      await client.query(effectRoutes.deleteEffectRoutes(group));
      if (routes.length > 0) await client.query(effectRoutes.insertEffectRoutes(routes, group));
    },
    (error) => error instanceof EffectRouteConflictError,
  );
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
  // A route recorded for `*` (a destination's) serves every type, or every provider.
  return (provider, type) => [
    ...new Set(
      [keyOf(provider, type), keyOf(provider, '*'), keyOf('*', type), keyOf('*', '*')].flatMap(
        (key) => byType.get(key) ?? [],
      ),
    ),
  ];
}

/** The event types of `provider` that have at least one recorded effect, in any group. */
export async function recordedEventTypes(pool: pg.Pool, provider: string): Promise<string[]> {
  const routes = await readAllEffectRoutes(pool);
  return [...new Set(routes.filter((route) => route.provider === provider).map((route) => route.eventType))];
}
