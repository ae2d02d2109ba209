import type { EffectKind } from '@webhook-inbox/db/statuses';
import type { Statement } from './statement.ts';

/** Statements on `effect_routes`: the effects the worker registered, written at its start, read by the others. */

export interface EffectRouteRow {
  provider: string;
  eventType: string;
  effect: string;
  kind: EffectKind;
  /** The effect's place among its event type's effects (the order they run), from 0. */
  position: number;
}

/**
 * Taken first in the transaction that replaces the routes: two workers starting at once replace them one after
 * the other (the second's delete sees the first's rows), and readers are never blocked.
 */
export function lockEffectRoutes(): Statement {
  return { text: 'lock table effect_routes in share row exclusive mode', values: [] };
}

export function deleteEffectRoutes(): Statement {
  return { text: 'delete from effect_routes', values: [] };
}

export function insertEffectRoutes(routes: readonly EffectRouteRow[]): Statement {
  return {
    text: `
      insert into effect_routes (provider, event_type, effect, kind, position)
      select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[])`,
    values: [
      routes.map((route) => route.provider),
      routes.map((route) => route.eventType),
      routes.map((route) => route.effect),
      routes.map((route) => route.kind),
      routes.map((route) => route.position),
    ],
  };
}

/** Every route, each event type's effects in the order they run. */
export function selectEffectRoutes(): Statement {
  return {
    text: `
      select provider, event_type as "eventType", effect, kind, position
        from effect_routes order by provider, event_type, position`,
    values: [],
  };
}
