import type { Statement } from './statement.ts';

/**
 * The overview's figures. Each reads an index range, never the whole event table: counts by status over a
 * window use `(status, received_at)`, failing effects are reached through the events that are not processed.
 */

/** Events received in the window, by their status now. */
export function statusCounts(since: Date): Statement {
  return {
    text: `select s.status, (select count(*)::int from webhook_events e
                               where e.status = s.status and e.received_at >= $1) as n
             from unnest($2::text[]) as s(status)`,
    values: [since, ['received', 'processing', 'processed', 'failed', 'dead']],
  };
}

/** Events waiting for a retry or dead, whenever they arrived: what needs an operator. */
export function openCounts(): Statement {
  return {
    text: `select (select count(*)::int from webhook_events where status = 'failed') as failed,
                  (select count(*)::int from webhook_events where status = 'dead') as dead`,
    values: [],
  };
}

/** Events received per bucket of `bucketSeconds` since `since` (a `received_at` index range), by status now. */
export function perBucket(since: Date, bucketSeconds: number): Statement {
  return {
    text: `select date_bin($2 * interval '1 second', received_at, $1) as bucket, status, count(*)::int as n
             from webhook_events where received_at >= $1
            group by 1, 2 order by 1`,
    values: [since, bucketSeconds],
  };
}

/**
 * Webhook requests per bucket of `bucketSeconds` since `since`, by kind: `accepted`, `duplicate`, `refused` (a 4xx:
 * the request can never succeed), `not recorded` (a 5xx: the provider retries). Reads the primary key's range
 * of `webhook_delivery_counts` (a minute first), which the receivers write every few seconds.
 */
export function deliveriesPerBucket(since: Date, bucketSeconds: number): Statement {
  return {
    text: `select date_bin($2 * interval '1 second', minute, $1) as bucket,
                  case when http_status < 300 then outcome
                       when http_status < 500 then 'refused'
                       else 'not recorded' end as kind,
                  sum(count)::int as n
             from webhook_delivery_counts where minute >= $1
            group by 1, 2 order by 1`,
    values: [since, bucketSeconds],
  };
}

/** The inbox's samples since `since`, oldest first: one row a minute at most (`inbox_samples`' primary key). */
export function samplesSince(since: Date): Statement {
  return {
    text: `select minute, jobs_created + jobs_retry as "jobsWaiting", jobs_active as "jobsActive",
                  oldest_unprocessed_seconds as "oldestSeconds", events_failed as failed, events_dead as dead,
                  failing_effects as "failingEffects"
             from inbox_samples where minute >= $1 order by minute`,
    values: [since],
  };
}

/** Failed ledger rows by effect, among events not processed (an effect of a processed event has completed). */
export function failingEffects(): Statement {
  return {
    text: `select r.effect, count(*)::int as n, max(r.last_error) as "sampleError"
             from webhook_events e
             join effect_runs r on r.provider = e.provider and r.event_id = e.event_id
            where e.status in ('received', 'processing', 'failed', 'dead') and r.status = 'failed'
            group by r.effect order by n desc, r.effect`,
    values: [],
  };
}

/**
 * The queue's backlog: jobs ready to run now, jobs waiting for a later retry, jobs running, and how long the
 * oldest ready job has waited.
 */
export function backlog(queue: string): Statement {
  return {
    text: `select count(*) filter (where state in ('created', 'retry') and start_after <= now())::int as ready,
                  count(*) filter (where state in ('created', 'retry') and start_after > now())::int as deferred,
                  count(*) filter (where state = 'active')::int as active,
                  extract(epoch from now() - min(created_on)
                    filter (where state in ('created', 'retry') and start_after <= now()))::float8 as "oldestReadySeconds"
             from pgboss.job where name = $1 and state < 'completed'`,
    values: [queue],
  };
}

/** The pg-boss jobs of one event, newest first (replays add jobs). */
export function eventJobs(queues: string[], provider: string, eventId: string): Statement {
  return {
    text: `select id, name, state, retry_count as "retryCount", retry_limit as "retryLimit",
                  created_on as "createdOn", started_on as "startedOn", completed_on as "completedOn",
                  start_after as "startAfter"
             from pgboss.job where name = any($1) and data @> $2::jsonb
            order by created_on desc limit 20`,
    values: [queues, JSON.stringify({ provider, eventId })],
  };
}
