import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import { ERROR_PLACEHOLDERS, MAX_ERROR_LENGTH } from '../ops/alerts/model.ts';
import { Params, type Statement } from './statement.ts';

/**
 * Failure groups: the failing effects of unfinished events (failed, dead, or waiting for their retry), grouped by
 * consumer group, effect and normalized error (the alerts' fingerprint, `normalizeErrorMessage`, here in SQL), so
 * that 5,000 `ECONNREFUSED` and one missing email are two groups, not one effect's "last error". Computed from
 * `effect_runs` on each read; `failure_groups` keeps only what operators decided (acknowledged, resolved).
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

/** A JavaScript pattern in PostgreSQL's dialect (ARE): `\b` is `\y` there. */
function pgPattern(pattern: RegExp): string {
  return pattern.source.replaceAll('\\b', '\\y').replaceAll("'", "''");
}

/** `normalizeErrorMessage(column)` in SQL: the same patterns, in the same order, as literals (compiled once). */
export function fingerprintSql(column: string): string {
  let text = `left(coalesce(${column}, ''), ${MAX_ERROR_LENGTH})`;
  for (const [pattern, placeholder] of ERROR_PLACEHOLDERS) {
    text = `regexp_replace(${text}, '${pgPattern(pattern)}', '${placeholder}', '${pattern.ignoreCase ? 'gi' : 'g'}')`;
  }
  return `btrim(regexp_replace(${text}, '\\s+', ' ', 'g'))`;
}

// Every failing effect of an event not processed, with its consumer group (its route's; `default` for an effect
// no worker registers any more) and the event's status in that group.
const FAILING = `
  select coalesce(rt.consumer_group, '${DEFAULT_GROUP}') as consumer_group, r.effect,
         coalesce(r.last_error, '') collate "C" as last_error, r.started_at, r.provider, r.event_id,
         case when rt.consumer_group is null or rt.consumer_group = '${DEFAULT_GROUP}' then e.status
              else g.status end as status
    from effect_runs r
    join webhook_events e on e.provider = r.provider and e.event_id = r.event_id
    left join effect_routes rt on rt.provider = e.provider and rt.event_type = e.type and rt.effect = r.effect
    left join webhook_event_groups g
      on g.provider = r.provider and g.event_id = r.event_id and g.consumer_group = rt.consumer_group
   where r.status = 'failed'`;

const STATE = `
  case when s.resolved_at is not null and f."lastSeen" <= s.resolved_at then 'resolved'
       when s.resolved_at is null and s.acknowledged_at is not null then 'acknowledged'
       else 'open' end`;

/**
 * `FAILING` counted per consumer group, effect, error and hour back (24: older), then normalized: the patterns
 * (~10 µs a row) run once per distinct error and hour, not once per failure, and no wide row is kept.
 */
function perError(narrow: string): string {
  return `
    per_error as (
      select consumer_group, effect, last_error,
             least(floor(extract(epoch from now() - started_at) / 3600), 24)::int as h,
             count(*)::int as n, count(*) filter (where status = 'dead')::int as dead,
             min(started_at) as first_seen, max(started_at) as last_seen,
             any_value(array[provider, event_id]) as example
        from (${FAILING} ${narrow}) f
       where status is distinct from 'processed'
       group by consumer_group, effect, last_error, h
    ),
    tagged as (select *, ${fingerprintSql('last_error')} as fingerprint from per_error)`;
}

/**
 * The groups, the most events first; `key` narrows the read to one group (its effect's ledger rows only). One
 * pass over the failing rows (reached through `effect_runs_failed_idx`) feeds the counts and the trend.
 */
export function selectFailureGroups(options: { key?: FailureGroupKey; limit?: number } = {}): Statement {
  const params = new Params();
  const { key } = options;
  const narrow = key ? `and r.effect = ${params.add(key.effect)}` : '';
  const only = key
    ? `where consumer_group = ${params.add(key.group)} and fingerprint = ${params.add(key.fingerprint)}`
    : '';
  return {
    text: `
      with ${perError(narrow)},
      hourly as (
        select consumer_group, effect, fingerprint, h, sum(n)::int as n, sum(dead)::int as dead,
               min(first_seen) as first_seen, max(last_seen) as last_seen, min(last_error) as sample_error,
               any_value(example) as example
          from tagged ${only} group by consumer_group, effect, fingerprint, h
      ),
      groups as (
        select consumer_group, effect, fingerprint, sum(n)::int as events, sum(dead)::int as dead,
               min(first_seen) as "firstSeen", max(last_seen) as "lastSeen", min(sample_error) as "sampleError",
               any_value(example) as example, coalesce(json_object_agg(h, n) filter (where h < 24), '{}') as trend
          from hourly group by consumer_group, effect, fingerprint
      )
      select f.consumer_group as "group", f.effect, f.fingerprint, f.events, f.dead, f."firstSeen", f."lastSeen",
             f."sampleError", f.example, f.trend, ${STATE} as state,
             (s.resolved_at is not null and f."lastSeen" > s.resolved_at) as reopened,
             s.acknowledged_by as "acknowledgedBy", s.acknowledged_at as "acknowledgedAt",
             s.resolved_by as "resolvedBy", s.resolved_at as "resolvedAt"
        from groups f left join failure_groups s using (consumer_group, effect, fingerprint)
       order by f.events desc, f.effect, f.fingerprint
       limit ${params.add(options.limit ?? 500)}`,
    values: params.values,
  };
}

/** A group's events, the latest failures first. */
export function selectGroupEvents(key: FailureGroupKey, limit: number): Statement {
  return {
    text: `
      with failing as not materialized (
        select * from (${FAILING} and r.effect = $1) f
         where consumer_group = $2 and status is distinct from 'processed'
      )
      select provider, event_id as "eventId", status, last_error as "lastError", started_at as "lastAttemptAt"
        from failing
       where last_error in (select d.last_error from (select distinct last_error from failing) d
                             where ${fingerprintSql('d.last_error')} = $3)
       order by started_at desc limit $4`,
    values: [key.effect, key.group, key.fingerprint, limit],
  };
}

/**
 * An event filter's clause: the event's `effect` fails with this fingerprint (a group's bulk replay). The errors
 * of the group are found once per statement (distinct errors normalized), then each event probed by key.
 */
export function failingWith(table: string, effect: string, fingerprint: string, params: Params): string {
  const name = params.add(effect);
  return `exists (
    select from effect_runs r
     where r.provider = ${table}.provider and r.event_id = ${table}.event_id and r.effect = ${name}
       and r.status = 'failed'
       and r.last_error = any(array(
         select d.last_error from (select distinct last_error from effect_runs
                                    where effect = ${name} and status = 'failed') d
          where ${fingerprintSql('d.last_error')} = ${params.add(fingerprint)})))`;
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
