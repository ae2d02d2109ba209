import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import { Params, type Statement } from './statement.ts';

/**
 * Failure groups: the failing effects of unfinished events (failed, dead, or waiting for their retry), grouped by
 * consumer group, effect and normalized error (the alerts' fingerprint, `normalizeErrorMessage`, here in SQL), so
 * that 5,000 `ECONNREFUSED` and one missing email are two groups, not one effect's "last error". Computed from
 * the failed `effect_runs` rows on each read (each carries its fingerprint and its event's state: migration
 * 0012); `failure_groups` keeps only what operators decided (acknowledged, resolved).
 */

/** A group's identity, as its pages and actions name it. */
export interface FailureGroupKey {
  group: string;
  effect: string;
  fingerprint: string;
}

export type FailureGroupState = 'open' | 'acknowledged' | 'resolved';

export interface FailureGroupRow extends FailureGroupKey {
  /** Events with the effect failing with this error. */
  events: number;
  dead: number;
  /** The earliest and latest last attempt among them. */
  firstSeen: Date;
  lastSeen: Date;
  /** One of the group's errors as recorded (the fingerprint is its normalized form). */
  sampleError: string;
  /** One of its events, `[provider, event id]`. */
  example: [string, string];
  /** Failures per hour over the last 24: `{"0": 12, "3": 1}`, hours back from now (0: this last hour). */
  trend: Record<string, number>;
  state: FailureGroupState;
  /** Resolved, then failed again since. */
  reopened: boolean;
  acknowledgedBy: string | null;
  acknowledgedAt: Date | null;
  resolvedBy: string | null;
  resolvedAt: Date | null;
}

// Failing rows (`effect_runs_failing_idx`) and their effect's consumer group: the route's, `default` for an effect
// no worker registers any more.
const ROUTED = `
  from effect_runs r
  left join effect_routes rt on rt.provider = r.provider and rt.event_type = r.event_type and rt.effect = r.effect`;
const IN_DEFAULT = `(rt.consumer_group is null or rt.consumer_group = '${DEFAULT_GROUP}')`;

// Every failing effect, with its event's state in the effect's group: the default group's from the row itself
// (migration 0012's triggers keep it), another group's from its `webhook_event_groups` row.
const FAILING = `
  select coalesce(rt.consumer_group, '${DEFAULT_GROUP}') as consumer_group, r.effect, r.fingerprint, r.started_at,
         r.provider, r.event_id,
         case when ${IN_DEFAULT} then r.event_state
              else (select effect_event_state(g.status) from webhook_event_groups g
                     where g.provider = r.provider and g.event_id = r.event_id and g.consumer_group = rt.consumer_group)
              end as state
  ${ROUTED}
   where r.status = 'failed'`;

const STATE = `
  case when s.resolved_at is not null and f."lastSeen" <= s.resolved_at then 'resolved'
       when s.resolved_at is null and s.acknowledged_at is not null then 'acknowledged'
       else 'open' end`;

const COUNTS = `count(*)::int as events, count(*) filter (where state = 'dead')::int as dead,
  min(started_at) as "firstSeen", max(started_at) as "lastSeen", any_value(array[provider, event_id]) as example`;

/**
 * The groups, the most events first; `key` narrows the read to one group. One pass over the failing rows, from
 * the index alone (`effect_runs_failing_idx`), counts them per event type and state (plain columns, hashed, in
 * parallel); the few counts are then routed to their consumer group. Another group's rows are read through the
 * routes to its effects, each with its group row. The trend reads the last 24 hours' failures alone
 * (`effect_runs_failed_at_idx`); the sample error is the example event's.
 */
export function selectFailureGroups(options: { key?: FailureGroupKey; limit?: number } = {}): Statement {
  const params = new Params();
  const { key } = options;
  const narrow = key
    ? `and r.effect = ${params.add(key.effect)} and r.fingerprint = ${params.add(key.fingerprint)}`
    : '';
  const only = key ? `where consumer_group = ${params.add(key.group)}` : '';
  return {
    text: `
      with keyed as (
        select r.provider, r.event_type, r.effect, r.fingerprint, r.event_state, count(*)::int as n,
               min(r.started_at) as first_seen, max(r.started_at) as last_seen, any_value(r.event_id) as example
          from effect_runs r
         where r.status = 'failed' ${narrow}
         group by r.provider, r.event_type, r.effect, r.fingerprint, r.event_state
      ),
      counted as (
        select coalesce(rt.consumer_group, '${DEFAULT_GROUP}') as consumer_group, r.effect, r.fingerprint,
               sum(r.n)::int as events, coalesce(sum(r.n) filter (where r.event_state = 'dead'), 0)::int as dead,
               min(r.first_seen) as "firstSeen", max(r.last_seen) as "lastSeen",
               any_value(array[r.provider, r.example]) as example
          from keyed r
          left join effect_routes rt
            on rt.provider = r.provider and rt.event_type = r.event_type and rt.effect = r.effect
         where ${IN_DEFAULT} and r.event_state is distinct from 'processed'
         group by 1, 2, 3
        union all
        select consumer_group, effect, fingerprint, ${COUNTS}
          from (${FAILING} and not ${IN_DEFAULT} ${narrow}) f
         where state is distinct from 'processed'
         group by 1, 2, 3
      ),
      groups as (select * from counted ${only}),
      hourly as (
        select consumer_group, effect, fingerprint, floor(extract(epoch from now() - started_at) / 3600)::int as h,
               count(*)::int as n
          from (${FAILING} and r.started_at > now() - interval '24 hours' ${narrow}) f
         where state is distinct from 'processed'
         group by consumer_group, effect, fingerprint, h
      ),
      trends as (
        select consumer_group, effect, fingerprint, json_object_agg(h, n) as trend
          from hourly group by consumer_group, effect, fingerprint
      )
      select f.consumer_group as "group", f.effect, f.fingerprint, f.events, f.dead, f."firstSeen", f."lastSeen",
             coalesce(x.last_error, '') as "sampleError", f.example, coalesce(t.trend, '{}') as trend,
             ${STATE} as state, (s.resolved_at is not null and f."lastSeen" > s.resolved_at) as reopened,
             s.acknowledged_by as "acknowledgedBy", s.acknowledged_at as "acknowledgedAt",
             s.resolved_by as "resolvedBy", s.resolved_at as "resolvedAt"
        from groups f
        left join trends t using (consumer_group, effect, fingerprint)
        left join failure_groups s using (consumer_group, effect, fingerprint)
        left join effect_runs x on x.provider = f.example[1] and x.event_id = f.example[2] and x.effect = f.effect
       order by f.events desc, f.effect, f.fingerprint
       limit ${params.add(options.limit ?? 500)}`,
    values: params.values,
  };
}

/** A group's events, the latest failures first, with their status now (the latest picked before any is read). */
export function selectGroupEvents(key: FailureGroupKey, limit: number): Statement {
  return {
    text: `
      select f.provider, f.event_id as "eventId",
             case when f.consumer_group = '${DEFAULT_GROUP}' then e.status
                  else (select g.status from webhook_event_groups g
                         where g.provider = f.provider and g.event_id = f.event_id
                           and g.consumer_group = f.consumer_group) end as status,
             r.last_error as "lastError", f.started_at as "lastAttemptAt"
        from (select * from (${FAILING} and r.effect = $1 and r.fingerprint = $3) f
               where consumer_group = $2 and state is distinct from 'processed'
               order by started_at desc limit $4) f
        join webhook_events e on e.provider = f.provider and e.event_id = f.event_id
        join effect_runs r on r.provider = f.provider and r.event_id = f.event_id and r.effect = f.effect
       order by f.started_at desc`,
    values: [key.effect, key.group, key.fingerprint, limit],
  };
}

/** An event filter's clause: the event's `effect` fails with this fingerprint (a group's bulk replay). */
export function failingWith(table: string, effect: string, fingerprint: string, params: Params): string {
  return `exists (
    select from effect_runs r
     where r.provider = ${table}.provider and r.event_id = ${table}.event_id and r.effect = ${params.add(effect)}
       and r.status = 'failed' and r.fingerprint = ${params.add(fingerprint)})`;
}

/** An operator acknowledged a group (someone is on it): it stays listed, marked. Clears a resolution. */
export function acknowledge(key: FailureGroupKey, who: string): Statement {
  return {
    text: `
      insert into failure_groups (consumer_group, effect, fingerprint, acknowledged_at, acknowledged_by)
      values ($1, $2, $3, now(), $4)
      on conflict (consumer_group, effect, fingerprint) do update
         set acknowledged_at = now(), acknowledged_by = $4, resolved_at = null, resolved_by = null`,
    values: [key.group, key.effect, key.fingerprint, who],
  };
}

/** An operator resolved a group: hidden from the open ones until one of its effects fails after now. */
export function resolve(key: FailureGroupKey, who: string): Statement {
  return {
    text: `
      insert into failure_groups (consumer_group, effect, fingerprint, resolved_at, resolved_by)
      values ($1, $2, $3, now(), $4)
      on conflict (consumer_group, effect, fingerprint) do update set resolved_at = now(), resolved_by = $4`,
    values: [key.group, key.effect, key.fingerprint, who],
  };
}
