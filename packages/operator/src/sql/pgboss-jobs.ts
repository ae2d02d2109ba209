import type { Statement } from '@webhook-inbox/inbox/sql';

/**
 * Read-only statements on pg-boss's job table (`pgboss.job`). pg-boss owns that table and writes it through its
 * own API; only what pg-boss's API cannot answer cheaply and up to date lives here.
 */

/** The job states `countLiveJobs` counts: waiting to run, waiting for a retry, running. */
export const LIVE_JOB_STATES = ['created', 'retry', 'active'] as const;

/**
 * Jobs per queue and live state, counted now (pg-boss's own queue counts are a cache the supervising instance
 * refreshes once a minute). Served by pg-boss's partial index on live jobs (`job_i14`: name, state), so the cost
 * follows the backlog, not the history of completed jobs.
 */
export function countLiveJobs(): Statement {
  return {
    name: 'webhook_inbox_count_live_jobs',
    text: `
      select name as queue, state::text as state, count(*)::int as n
        from pgboss.job
       where state in ('created', 'retry', 'active')
       group by name, state`,
    values: [],
  };
}

/**
 * The trace context the receiver's job for an event carried (its `trace`), for a replay to link to. That job was
 * sent in the transaction that recorded the event, so its `created_on` is the event's `received_at` (both are
 * that transaction's `now()`): one probe of pg-boss's (name, created_on) index (`job_i15`). No row once pg-boss
 * has deleted the job, or when tracing was off.
 */
export function selectFirstJobTrace(queue: string, provider: string, eventId: string): Statement {
  return {
    name: 'webhook_inbox_select_first_job_trace',
    text: `
      select j.data->'trace' as trace
        from webhook_events e
        join pgboss.job j on j.name = $1 and j.created_on = e.received_at
       where e.provider = $2 and e.event_id = $3
         and j.data->>'provider' = $2 and j.data->>'eventId' = $3
         and j.data ? 'trace'
       limit 1`,
    values: [queue, provider, eventId],
  };
}

/**
 * The console's overview: a queue's jobs ready to run now, waiting for a later retry, running, and how long the
 * oldest ready job has waited.
 */
export function selectBacklog(queue: string): Statement {
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

export interface EventJobRow {
  id: string;
  name: string;
  state: string;
  retryCount: number;
  retryLimit: number;
  createdOn: Date;
  startedOn: Date | null;
  completedOn: Date | null;
  startAfter: Date;
}

/** The pg-boss jobs of one event in `queues`, newest first (replays add jobs): the console's event page. */
export function selectEventJobs(queues: string[], provider: string, eventId: string): Statement {
  return {
    text: `select id, name, state, retry_count as "retryCount", retry_limit as "retryLimit",
                  created_on as "createdOn", started_on as "startedOn", completed_on as "completedOn",
                  start_after as "startAfter"
             from pgboss.job where name = any($1) and data @> $2::jsonb
            order by created_on desc limit 20`,
    values: [queues, JSON.stringify({ provider, eventId })],
  };
}

/** A destination queue's deliveries not done yet, and the oldest one's event's reception time. */
export interface DestinationBacklogRow {
  queue: string;
  pending: number;
  oldestPending: Date | null;
}

/**
 * The deliveries waiting in each destination queue (to run, for a retry, paused, running): how many and since when
 * the oldest one's event was received (a retry is a new job; its event's time is what the backlog's age means).
 * On pg-boss's partial index on live jobs (`job_i14`).
 */
export function selectDestinationBacklogs(queues: readonly string[]): Statement {
  return {
    text: `
      select j.name as queue, count(*)::int as pending, min(coalesce(e.received_at, j.created_on)) as "oldestPending"
        from pgboss.job j
        left join webhook_events e on e.provider = j.data->>'provider' and e.event_id = j.data->>'eventId'
       where j.name = any($1::text[]) and j.state in ('created', 'retry', 'active')
       group by j.name`,
    values: [queues],
  };
}
