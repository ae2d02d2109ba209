import type { EffectKind } from '@webhook-inbox/db/statuses';
import type { Statement } from './statement.ts';

/**
 * Statements on `effect_routes`: the effects each consumer group's worker registered, written at its start, read
 * by the others (and by the receiver's insert, which delivers a new event to every other group that has an
 * effect for its type).
 */

export interface EffectRouteRow {
  provider: string;
  eventType: string;
  effect: string;
  kind: EffectKind;
  /** The effect's place among its event type's effects (the order they run), from 0. */
  position: number;
}

/** A recorded route, with the consumer group whose worker registered it. */
export interface RecordedRouteRow extends EffectRouteRow {
  consumerGroup: string;
}

/**
 * Taken first in the transaction that replaces a group's routes: two workers starting at once replace them one
 * after the other (the second sees the first's rows, so an effect name two groups claim is caught).
 *
 * The default group's routes deliver nothing (its job is sent for every event), so its lock leaves readers
 * alone. Another group's routes decide which events the receiver delivers to it: that lock waits for every
 * recording transaction in flight and holds new ones back until the routes are committed, so an event is
 * either committed before the routes or recorded by a statement that reads them. A group therefore receives
 * every event committed after its routes were. The receivers wait for as long as this transaction lasts
 * (a delete and an insert of the group's rows), once per worker start, or as long as the lock is waited for (at
 * most the transaction's `lock_timeout`: see `recordEffectRoutes`).
 */
export function lockEffectRoutes(group: string, defaultGroup: string): Statement {
  return {
    text:
      group === defaultGroup
        ? 'lock table effect_routes in share row exclusive mode'
        : 'lock table effect_routes in access exclusive mode',
    values: [],
  };
}

/** For the rest of the transaction: a lock not granted within `ms` fails the statement (SQLSTATE 55P03). */
export function setLockTimeout(ms: number): Statement {
  return { text: `select set_config('lock_timeout', $1, true)`, values: [`${Math.round(ms)}ms`] };
}

export function deleteEffectRoutes(group: string): Statement {
  return { text: 'delete from effect_routes where consumer_group = $1', values: [group] };
}

/** Routes of other groups with the same (provider, event type, effect) as one of `routes`. */
export function selectConflictingRoutes(routes: readonly EffectRouteRow[], group: string): Statement {
  return {
    text: `
      select r.provider, r.event_type as "eventType", r.effect, r.kind, r.position,
             r.consumer_group as "consumerGroup"
        from effect_routes r
        join unnest($1::text[], $2::text[], $3::text[]) as t(provider, event_type, effect)
          using (provider, event_type, effect)
       where r.consumer_group <> $4
       order by r.provider, r.event_type, r.effect`,
    values: [
      routes.map((route) => route.provider),
      routes.map((route) => route.eventType),
      routes.map((route) => route.effect),
      group,
    ],
  };
}

export function insertEffectRoutes(routes: readonly EffectRouteRow[], group: string): Statement {
  return {
    text: `
      insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
      select *, $6 from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[])`,
    values: [
      routes.map((route) => route.provider),
      routes.map((route) => route.eventType),
      routes.map((route) => route.effect),
      routes.map((route) => route.kind),
      routes.map((route) => route.position),
      group,
    ],
  };
}

/** Every route (or one group's), each event type's effects in the order they run. */
export function selectEffectRoutes(group?: string): Statement {
  return {
    text: `
      select provider, event_type as "eventType", effect, kind, position, consumer_group as "consumerGroup"
        from effect_routes
       ${group === undefined ? '' : 'where consumer_group = $1'}
       order by provider, event_type, position`,
    values: group === undefined ? [] : [group],
  };
}
