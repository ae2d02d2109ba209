import type { AttemptOutcome } from '@webhook-inbox/db/statuses';
import { Params, type Statement } from './statement.ts';

/**
 * Statements on `effect_attempts`: the history of every effect's attempts, written by the runner at the end of a
 * batch (`../effects/attempts.ts`), read by the event page, the admin API and the CLI's `show`. Retention
 * removes the rows with their event (foreign key, `on delete cascade`).
 */

/** Attempts kept per effect beyond its first: the first says how it started, these how it is going. */
const KEEP_LAST_ATTEMPTS = 20;

export interface AttemptRecord {
  provider: string;
  eventId: string;
  effect: string;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  outcome: AttemptOutcome;
  error: string | null;
  worker: string;
  jobId: string | null;
  /** A destination's delivery: the answer's HTTP status (null without an answer); absent for other effects. */
  responseStatus?: number | null;
  /** A destination's delivery: the start of the answer's body, capped by the delivery. */
  responseExcerpt?: string | null;
}

/**
 * Appends a batch's attempts, numbered after their effect's last one in the order given, and drops the attempts of
 * those effects between the first and the last `keep`. An event purged meanwhile gets no rows (its attempts would
 * be orphans). Answers the records that lost their number to a concurrent writer of the same effect's history (a
 * delivery beside its fan-out's batch), by their index in `records`: the statement read the last number before
 * that writer's row committed, and `writeAttempts` (../effects/attempts.ts) writes them again. Rows are written in
 * key order, so two batches lock in one order.
 */
export function insertAttempts(
  records: readonly AttemptRecord[],
  keep: number = KEEP_LAST_ATTEMPTS,
): Statement {
  const params = new Params();
  return {
    name: 'webhook_inbox_insert_attempts',
    // NOT IN keeps the lookup a hashed subplan: a join of the two lists would be planned for one row each.
    text: `with ${appendAttempts(params, records, keep)}
      select (n - 1)::int as index from attempts_numbered
       where (provider, event_id, effect, attempt) not in (select provider, event_id, effect, attempt from attempts_added)`,
    values: params.values,
  };
}

/** A record `insertAttempts` did not add for a number taken meanwhile: its index in the records given. */
export interface LostAttempt {
  index: number;
}

/**
 * `insertAttempts` as common table expressions (`attempts_input`, `attempts_numbered`, `attempts_added`: the key
 * and number of each row added, `attempts_pruned`), their values added to `params`: for a statement that records a
 * batch's attempts with the rest of its outcome in one round trip.
 */
export function appendAttempts(
  params: Params,
  records: readonly AttemptRecord[],
  keep: number = KEEP_LAST_ATTEMPTS,
): string {
  const columns = ATTEMPT_COLUMNS.map(([value, type]) => `${params.add(records.map(value))}::${type}[]`).join(
    ', ',
  );
  return appendInput(
    params,
    `select * from unnest(${columns}) with ordinality as t(${ATTEMPT_INPUT_NAMES}, n)`,
    keep,
  );
}

/**
 * `appendAttempts` for one attempt (a destination's delivery), its values as scalars: PostgreSQL knows the input is
 * one row, so the statement's generic plan probes the indexes, and a named statement is planned once per
 * connection rather than at every execution (with arrays, a generic plan cannot know their length).
 */
export function appendAttempt(
  params: Params,
  record: AttemptRecord,
  keep: number = KEEP_LAST_ATTEMPTS,
): string {
  const values = ATTEMPT_COLUMNS.map(([value, type]) => `${params.add(value(record))}::${type}`);
  return appendInput(
    params,
    `select * from (select ${values.join(', ')}, 1::bigint) as t(${ATTEMPT_INPUT_NAMES}, n)`,
    keep,
  );
}

/** An attempt's columns as `attempts_input` has them: how each is read from a record, and its type. */
const ATTEMPT_COLUMNS: ReadonlyArray<readonly [(record: AttemptRecord) => unknown, string]> = [
  [(r) => r.provider, 'text'],
  [(r) => r.eventId, 'text'],
  [(r) => r.effect, 'text'],
  [(r) => r.startedAt, 'timestamptz'],
  [(r) => r.finishedAt, 'timestamptz'],
  [(r) => Math.round(r.durationMs), 'int'],
  [(r) => r.outcome, 'text'],
  [(r) => r.error, 'text'],
  [(r) => r.worker, 'text'],
  [(r) => r.jobId, 'text'],
  [(r) => r.responseStatus ?? null, 'int'],
  [(r) => r.responseExcerpt ?? null, 'text'],
];
const ATTEMPT_INPUT_NAMES = `provider, event_id, effect, started_at, finished_at, duration_ms, outcome, error, worker,
               job_id, response_status, response_excerpt`;

/** The insert and the pruning over `input` (a query of `ATTEMPT_INPUT_NAMES` and the ordinal `n`). */
function appendInput(params: Params, input: string, keep: number): string {
  // Only an effect past its first and `keep` more attempts has any to drop: the others' rows are not probed at
  // all, whichever index the plan (made from the tables' statistics when the connection prepared it) would use.
  const keepAfter = params.add(keep);
  return `
      attempts_input as (${input}),
      attempts_numbered as (
        select i.*,
               coalesce((select max(a.attempt) from effect_attempts a
                          where a.provider = i.provider and a.event_id = i.event_id and a.effect = i.effect), 0)
                 + row_number() over (partition by i.provider, i.event_id, i.effect order by i.n) as attempt
          from attempts_input i
         where exists (select 1 from webhook_events e where e.provider = i.provider and e.event_id = i.event_id)
      ),
      attempts_added as (
        insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms,
                                     outcome, error, worker, job_id, response_status, response_excerpt)
        select provider, event_id, effect, attempt, started_at, finished_at, duration_ms, outcome, error, worker,
               job_id, response_status, response_excerpt
          from attempts_numbered
         order by provider, event_id, effect, n
        on conflict do nothing
        returning provider, event_id, effect, attempt
      ),
      attempts_pruned as (
        delete from effect_attempts a
         using (select * from attempts_added where attempt > ${keepAfter} + 1) added
         where a.provider = added.provider and a.event_id = added.event_id and a.effect = added.effect
           and a.attempt > 1 and a.attempt <= added.attempt - ${keepAfter}
        returning 1
      )`;
}

/** One kept attempt of an event's effect, numbered; the answer's status and excerpt null but for a destination's. */
export interface AttemptRow extends Omit<
  AttemptRecord,
  'provider' | 'eventId' | 'responseStatus' | 'responseExcerpt'
> {
  attempt: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
}

/** An event's attempts, by effect, oldest first: what `EventDetail.attempts` holds. */
export function selectAttempts(provider: string, eventId: string): Statement {
  return {
    text: `
      select effect, attempt, started_at as "startedAt", finished_at as "finishedAt", duration_ms as "durationMs",
             outcome, error, worker, job_id as "jobId", response_status as "responseStatus",
             response_excerpt as "responseExcerpt"
        from effect_attempts where provider = $1 and event_id = $2 order by effect, attempt`,
    values: [provider, eventId],
  };
}

/**
 * A delivery's attempt, as opposed to its fan-out's row (the first of a destination's effect, which sent nothing):
 * it has an answer's status, or the error of a request that got none.
 */
const DELIVERY_ATTEMPT = `(response_status is not null or error is not null)`;

/** The deliveries of one destination's effect since a time: outcomes and latency percentiles (ms). */
export interface DeliveryStatsRow {
  effect: string;
  attempts: number;
  succeeded: number;
  failed: number;
  dead: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  lastAttemptAt: Date | null;
}

/**
 * Per destination effect (`destination.<name>`), its delivery attempts started at or after `since`: how they
 * ended and their latency percentiles, on `effect_attempts_effect_started_idx`.
 */
export function selectDeliveryStats(effects: readonly string[], since: Date): Statement {
  return {
    text: `
      select effect, count(*)::int as attempts,
             count(*) filter (where outcome = 'completed')::int as succeeded,
             count(*) filter (where outcome = 'failed')::int as failed,
             count(*) filter (where outcome = 'dead')::int as dead,
             percentile_cont(0.5) within group (order by duration_ms)::float8 as "p50Ms",
             percentile_cont(0.95) within group (order by duration_ms)::float8 as "p95Ms",
             percentile_cont(0.99) within group (order by duration_ms)::float8 as "p99Ms",
             max(started_at) as "lastAttemptAt"
        from effect_attempts
       where effect = any($1::text[]) and started_at >= $2 and ${DELIVERY_ATTEMPT}
       group by effect`,
    values: [effects, since],
  };
}

/** A cause of a destination's failed attempts: the failure groups' normalized error. */
export interface DeliveryFailureCauseRow {
  fingerprint: string;
  attempts: number;
  events: number;
  lastSeen: Date;
  sampleError: string;
  /** The latest such attempt's HTTP status (null: no answer). */
  lastStatus: number | null;
  /** The latest such attempt's event, `[provider, event id]`. */
  example: [string, string];
}

/**
 * One destination effect's failed attempts since `since`, grouped by cause: the error normalized as the failure
 * groups normalize it (`effect_error_fingerprint`, migration 0012), the most attempts first.
 */
export function selectDeliveryFailureCauses(effect: string, since: Date, limit: number): Statement {
  return {
    text: `
      select effect_error_fingerprint(error) as fingerprint, count(*)::int as attempts,
             count(distinct (provider, event_id))::int as events, max(started_at) as "lastSeen",
             (array_agg(error order by started_at desc))[1] as "sampleError",
             (array_agg(response_status order by started_at desc))[1] as "lastStatus",
             array[(array_agg(provider order by started_at desc))[1],
                   (array_agg(event_id order by started_at desc))[1]] as example
        from effect_attempts
       where effect = $1 and started_at >= $2 and outcome in ('failed', 'dead') and error is not null
       group by 1
       order by attempts desc, fingerprint
       limit $3`,
    values: [effect, since, limit],
  };
}
