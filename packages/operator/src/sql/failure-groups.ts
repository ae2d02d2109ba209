import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import { countsSql } from './failure-counts.ts';
import { effectRoutes, Params, type Statement } from '@webhook-inbox/inbox/sql';

/**
 * Failure groups: the failing effects of unfinished events (failed, dead, or waiting for their retry), grouped by
 * consumer group, effect and normalized error (the alerts' fingerprint, `normalizeErrorMessage`, here in SQL), so
 * that 5,000 `ECONNREFUSED` and one missing email are two groups, not one effect's "last error". Each failed
 * `effect_runs` row carries its fingerprint and its event's state (migration 0012); the default group's are
 * counted as they change (`failure-counts.ts`, migration 0013), so a read costs its groups, not their rows.
 * `failure_groups` keeps each group's identity past its failures: its first failure ever and what operators decided
 * (acknowledged, resolved), so a cause that clears and returns is the same group, first seen when it first was.
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
  /**
   * The group's first failure ever (`failure_groups.first_seen`, kept when its failures clear and return), and
   * the latest last attempt among its events.
   */
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

// Failing rows (`effect_runs_failing_idx`) and their effect's consumer group: the route's (exact, or a destination's
// `*`), `default` for an effect no worker registers any more.
const { routedGroup } = effectRoutes;
const ROUTED = `
  from effect_runs r
  left join lateral (select ${routedGroup('r.provider', 'r.event_type', 'r.effect')} as consumer_group) rt on true`;
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

// The failing effects routed to another consumer group, read from their routes: none read when every route is the
// default group's.
const OTHER_GROUPS = `
  select rt.consumer_group, r.effect, r.fingerprint, r.started_at, r.provider, r.event_id,
         (select effect_event_state(g.status) from webhook_event_groups g
           where g.provider = r.provider and g.event_id = r.event_id and g.consumer_group = rt.consumer_group) as state
    from (select distinct effect from effect_routes where consumer_group <> '${DEFAULT_GROUP}') o
    join effect_runs r on r.effect = o.effect
    join lateral (select ${routedGroup('r.provider', 'r.event_type', 'r.effect')} as consumer_group) rt on true
   where rt.consumer_group <> '${DEFAULT_GROUP}' and r.status = 'failed'`;

// The failing rows of one counted key (`k`), on `effect_runs_failing_idx` from its (effect, fingerprint) in time order;
// OF_CAUSE, in any event state.
const OF_CAUSE = `
  r.status = 'failed' and r.effect = k.effect and r.fingerprint = k.fingerprint and r.started_at is not null
  and r.provider = k.provider and r.event_type is not distinct from k.event_type`;
const OF_KEY = `${OF_CAUSE} and r.event_state is not distinct from k.event_state`;

// The earliest failing row of the group `$1`, effect `$2` and fingerprint `$3`: a decision's `first_seen`.
const EARLIEST = `(select min(r.started_at) ${ROUTED}
   where r.status = 'failed' and r.effect = $2 and r.fingerprint = $3
     and coalesce(rt.consumer_group, '${DEFAULT_GROUP}') = $1)`;

/**
 * Gives every failing group without a `first_seen` its earliest failing row. The counted keys with failures
 * (`failure_counts` and the deltas not folded yet) name the groups, one index probe each finds the earliest row;
 * `foldFailureCounts` runs it each minute, holding the fold's lock, so a cause that clears and returns after that
 * keeps its first failure. The worker's transactions never touch `failure_groups`: two workers failing the same
 * new cause at once would wait on each other's uncommitted insert of its row.
 */
export function recordFirstSeen(): Statement {
  return {
    text: `
      insert into failure_groups as s (consumer_group, effect, fingerprint, first_seen)
      select coalesce(rt.consumer_group, '${DEFAULT_GROUP}'), k.effect, k.fingerprint, min(f.started_at)
        from (select provider, event_type, effect, fingerprint from failure_counts where n > 0
              union
              select provider, event_type, effect, fingerprint from failure_count_deltas where n > 0) k
        left join lateral (select ${routedGroup('k.provider', 'k.event_type', 'k.effect')} as consumer_group) rt
          on true
        join lateral (select r.started_at from effect_runs r
                       where ${OF_CAUSE}
                       order by r.started_at limit 1) f on true
       where k.fingerprint is not null
         and not exists (select from failure_groups g
                          where g.consumer_group = coalesce(rt.consumer_group, '${DEFAULT_GROUP}')
                            and g.effect = k.effect and g.fingerprint = k.fingerprint and g.first_seen is not null)
       group by 1, 2, 3
      on conflict (consumer_group, effect, fingerprint) do update set first_seen = excluded.first_seen
       where s.first_seen is null`,
    values: [],
  };
}

const HOUR = `floor(extract(epoch from now() - r.started_at) / 3600)::int`;

const STATE = `
  case when s.resolved_at is not null and f."lastSeen" <= s.resolved_at then 'resolved'
       when s.resolved_at is null and s.acknowledged_at is not null then 'acknowledged'
       else 'open' end`;

const COUNTS = `count(*)::int as events, count(*) filter (where state = 'dead')::int as dead,
  min(started_at) as "firstSeen", max(started_at) as "lastSeen", any_value(array[provider, event_id]) as example`;

/**
 * The groups, the most events first; `key` narrows the read to one group. The default group's counts are read
 * from `failure_counts` (a few rows per group: provider, event type and event state); each counted key's first and
 * last failure are the ends of its rows in `effect_runs_failing_idx` (two probes) and its trend the last 24 hours
 * of them (a range of the same index). Another group's rows are read through the routes to its effects, each with
 * its group row. The sample error is the example event's.
 */
export function selectFailureGroups(options: { key?: FailureGroupKey; limit?: number } = {}): Statement {
  const params = new Params();
  const { key } = options;
  const [effect, fingerprint] = key ? [params.add(key.effect), params.add(key.fingerprint)] : [];
  const keyWhere = key ? `effect = ${effect} and fingerprint = ${fingerprint}` : 'true';
  const narrow = key ? `and r.effect = ${effect} and r.fingerprint = ${fingerprint}` : '';
  const only = key ? `where consumer_group = ${params.add(key.group)}` : '';
  return {
    text: `
      with keyed as (
        select k.provider, k.event_type, k.effect, k.fingerprint, k.event_state, k.n, f.first_seen, l.last_seen,
               l.example
          from (${countsSql(keyWhere)}) k
          left join lateral (select ${routedGroup('k.provider', 'k.event_type', 'k.effect')} as consumer_group) rt
            on true
          left join lateral (select r.started_at as first_seen from effect_runs r
                              where ${OF_KEY} order by r.started_at limit 1) f on true
          left join lateral (select r.started_at as last_seen, r.event_id as example from effect_runs r
                              where ${OF_KEY} order by r.started_at desc limit 1) l on true
         where ${IN_DEFAULT} and k.event_state is distinct from 'processed'
      ),
      counted as (
        select '${DEFAULT_GROUP}' as consumer_group, effect, fingerprint, sum(n)::int as events,
               coalesce(sum(n) filter (where event_state = 'dead'), 0)::int as dead,
               min(first_seen) as "firstSeen", max(last_seen) as "lastSeen",
               any_value(array[provider, example]) as example
          from keyed group by effect, fingerprint
        union all
        select consumer_group, effect, fingerprint, ${COUNTS}
          from (${OTHER_GROUPS} ${narrow}) f
         where state is distinct from 'processed'
         group by 1, 2, 3
      ),
      groups as (select * from counted ${only}),
      hourly as (
        select '${DEFAULT_GROUP}' as consumer_group, k.effect, k.fingerprint, ${HOUR} as h, count(*)::int as n
          from keyed k
          join effect_runs r on ${OF_KEY} and r.started_at > now() - interval '24 hours'
         group by 1, 2, 3, 4
        union all
        select consumer_group, effect, fingerprint, ${HOUR} as h, count(*)::int as n
          from (${OTHER_GROUPS} and r.started_at > now() - interval '24 hours' ${narrow}) r
         where state is distinct from 'processed'
         group by 1, 2, 3, 4
      ),
      trends as (
        select consumer_group, effect, fingerprint, json_object_agg(h, n) as trend
          from hourly group by consumer_group, effect, fingerprint
      )
      select f.consumer_group as "group", f.effect, f.fingerprint, f.events, f.dead,
             least(s.first_seen, f."firstSeen") as "firstSeen", f."lastSeen",
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

/** An operator acknowledged a group (someone is on it): it stays listed, marked. Clears a resolution. */
export function acknowledge(key: FailureGroupKey, who: string): Statement {
  return {
    text: `
      insert into failure_groups as s (consumer_group, effect, fingerprint, first_seen, acknowledged_at,
                                       acknowledged_by)
      values ($1, $2, $3, ${EARLIEST}, now(), $4)
      on conflict (consumer_group, effect, fingerprint) do update
         set first_seen = coalesce(s.first_seen, excluded.first_seen), acknowledged_at = now(), acknowledged_by = $4,
             resolved_at = null, resolved_by = null`,
    values: [key.group, key.effect, key.fingerprint, who],
  };
}

/** An operator resolved a group: hidden from the open ones until one of its effects fails after now. */
export function resolve(key: FailureGroupKey, who: string): Statement {
  return {
    text: `
      insert into failure_groups as s (consumer_group, effect, fingerprint, first_seen, resolved_at, resolved_by)
      values ($1, $2, $3, ${EARLIEST}, now(), $4)
      on conflict (consumer_group, effect, fingerprint) do update
         set first_seen = coalesce(s.first_seen, excluded.first_seen), resolved_at = now(), resolved_by = $4`,
    values: [key.group, key.effect, key.fingerprint, who],
  };
}
