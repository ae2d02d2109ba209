import type pg from 'pg';
import type { EffectLookup } from './replay.ts';
import { effectRoutes } from './sql/index.ts';
import type { EffectRouteRow } from './sql/effect-routes.ts';

/**
 * The one list of the effects that exist: the worker records the effects it registered (`effect_routes`) when
 * it starts, and everything that needs to know them without running the product's code reads that record:
 * replays (CLI, admin API, console) and Stripe reconciliation.
 */

/** Replaces the recorded routes with `routes`, in one transaction. */
export async function recordEffectRoutes(pool: pg.Pool, routes: readonly EffectRouteRow[]): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    await client.query(effectRoutes.lockEffectRoutes());
    await client.query(effectRoutes.deleteEffectRoutes());
    if (routes.length > 0) await client.query(effectRoutes.insertEffectRoutes(routes));
    await client.query('commit');
  } catch (error) {
    broken = true;
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The recorded routes, as rows. Empty when no worker of this version has started on the database yet. */
export async function readEffectRoutes(pool: pg.Pool): Promise<EffectRouteRow[]> {
  return (await pool.query<EffectRouteRow>(effectRoutes.selectEffectRoutes())).rows;
}

/**
 * The recorded routes as a replay's lookup (names in the order they run), or `undefined` when none are
 * recorded: a replay then re-enqueues and leaves the choice to the worker's ledger, instead of concluding from
 * an empty record that nothing is left to run.
 */
export async function loadEffectLookup(pool: pg.Pool): Promise<EffectLookup | undefined> {
  const routes = await readEffectRoutes(pool);
  if (routes.length === 0) return undefined;
  const byType = new Map<string, string[]>();
  for (const route of routes) {
    const key = `${route.provider}\0${route.eventType}`;
    byType.set(key, [...(byType.get(key) ?? []), route.effect]);
  }
  return (provider, type) => byType.get(`${provider}\0${type}`) ?? [];
}

/** The event types of `provider` that have at least one recorded effect. */
export async function recordedEventTypes(pool: pg.Pool, provider: string): Promise<string[]> {
  const routes = await readEffectRoutes(pool);
  return [...new Set(routes.filter((route) => route.provider === provider).map((route) => route.eventType))];
}
