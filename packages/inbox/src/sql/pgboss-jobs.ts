import type { Statement } from './statement.ts';

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
