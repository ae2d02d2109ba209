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
