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
 * SHARE ROW EXCLUSIVE conflicts with itself and with writers, not with the ACCESS SHARE of a reader: the
 * receivers' inserts, which read the routes, go on while it is held or waited for, and so does a `pg_dump`. The
 * routes change in one commit, so an insert reads either the old set or the new one: a group gets every event
 * whose insert statement starts after its routes are committed (each statement of a READ COMMITTED transaction
 * reads what was committed when it started), none inserted before.
 */
export function lockEffectRoutes(): Statement {
  return { text: 'lock table effect_routes in share row exclusive mode', values: [] };
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

/**
 * The consumer group whose worker registered `effect` (a destination's fan-out, `destination.<name>`): no row when
 * no worker did. An effect belongs to one group (`selectConflictingRoutes` refuses a second).
 */
export function selectEffectGroup(effect: string): Statement {
  return {
    text: `select consumer_group as "consumerGroup" from effect_routes where effect = $1 limit 1`,
    values: [effect],
  };
}

/**
 * The effects consumer groups `groups` run for `provider` events of type `type`: what a principal limited to those
 * groups may see of such an event's ledger.
 */
export function selectGroupsEffects(provider: string, type: string, groups: readonly string[]): Statement {
  return {
    text: `select distinct effect from effect_routes
            where provider = $1 and event_type = $2 and consumer_group = any($3::text[])`,
    values: [provider, type, groups],
  };
}

/**
 * Whether event (`provider`, `eventId`) exists and is of a type one of `groups` has an effect for: what a principal
 * limited to those groups may see and replay. Answers `visible`.
 */
export function selectEventVisible(provider: string, eventId: string, groups: readonly string[]): Statement {
  return {
    text: `select exists (
             select from webhook_events e
               join effect_routes r on r.provider = e.provider and r.event_type = e.type
              where e.provider = $1 and e.event_id = $2 and r.consumer_group = any($3::text[])) as visible`,
    values: [provider, eventId, groups],
  };
}

/** The consumer groups that recorded routes, by name (`group`): the console's group selector. */
export function selectGroupNames(): Statement {
  return {
    text: `select distinct consumer_group as "group" from effect_routes order by consumer_group`,
    values: [],
  };
}

/**
 * The consumer group routing `effect` for an event of `provider` and `type` (SQL expressions): its exact route's, or
 * a `*` route's (a destination registers `*` for a wildcard type or source), the most exact first. A scalar subquery
 * for the operator's reads (failure groups) that name an effect's group.
 */
export function routedGroup(provider: string, type: string, effect: string): string {
  return `(select rt.consumer_group from effect_routes rt
            where rt.effect = ${effect} and rt.provider in (${provider}, '*') and rt.event_type in (${type}, '*')
            order by rt.provider = '*', rt.event_type = '*' limit 1)`;
}

/** True when `group` (an SQL expression) routes some effect for events of `provider` and `type`, `*` routes included. */
export function groupRoutes(group: string, provider: string, type: string): string {
  return `exists (select from effect_routes rt
                   where rt.consumer_group = ${group} and rt.provider in (${provider}, '*')
                     and rt.event_type in (${type}, '*'))`;
}
