import type pg from 'pg';
import { DEFAULT_GROUP, queuesOf } from '@webhook-inbox/inbox/queue';
import { webhookEventGroups, webhookEvents } from '@webhook-inbox/inbox/sql';
import * as pgbossJobs from './sql/pgboss-jobs.ts';

type UnfinishedStatus = (typeof webhookEvents.UNFINISHED_STATUSES)[number];
type LiveJobState = (typeof pgbossJobs.LIVE_JOB_STATES)[number];

/** What an operator asks of the database without writing SQL: the backlog and what is stuck. */
export interface InboxStats {
  /** The consumer group these are of; absent: the whole inbox (`events` then are the default group's). */
  group?: string;
  /** Events per status, every status but `processed` (0 when none). */
  events: Record<UnfinishedStatus, number>;
  /** Age of the oldest received, processing or failed event, seconds; 0 when there is none. */
  oldestUnprocessedAgeSeconds: number;
  /** Live jobs per pg-boss queue and state; a queue with no live job is absent. */
  jobs: { queue: string; state: LiveJobState; count: number }[];
  /**
   * Events per consumer group other than the default (whose counts are `events`) and unfinished status; a group
   * and status with none is absent.
   */
  groups: { group: string; status: UnfinishedStatus; count: number }[];
}

/**
 * Reads `InboxStats`: three statements, each answered from an index (see `countUnfinished`, `countLiveJobs`,
 * `countUnfinishedByGroup`).
 * Meant to run once per scrape interval (the receiver caches it for its `/metrics`), not per request.
 *
 * @example
 * const { events, oldestUnprocessedAgeSeconds } = await readInboxStats(pool);
 */
export async function readInboxStats(
  pool: pg.Pool,
  options: { group?: string | undefined } = {},
): Promise<InboxStats> {
  const { group } = options;
  const unfinished = await pool.query<{
    oldestUnprocessedAgeSeconds: number;
    byStatus: Partial<Record<UnfinishedStatus, number>>;
  }>(
    group === undefined || group === DEFAULT_GROUP
      ? webhookEvents.countUnfinished()
      : webhookEventGroups.countUnfinishedInGroup(group),
  );
  const jobs = await pool.query<{ queue: string; state: LiveJobState; n: number }>(
    pgbossJobs.countLiveJobs(),
  );
  const groups = await pool.query<{ group: string; status: UnfinishedStatus; n: number }>(
    webhookEventGroups.countUnfinishedByGroup(),
  );
  const row = unfinished.rows[0];
  const events = Object.fromEntries(
    webhookEvents.UNFINISHED_STATUSES.map((status) => [status, row?.byStatus[status] ?? 0]),
  ) as Record<UnfinishedStatus, number>;
  // One group's part: its own queues' jobs, and its row among the other groups' (none for the default group).
  const queues = group === undefined ? undefined : Object.values(queuesOf(group));
  return {
    ...(group === undefined ? {} : { group }),
    events,
    oldestUnprocessedAgeSeconds: row?.oldestUnprocessedAgeSeconds ?? 0,
    jobs: jobs.rows
      .filter((job) => !queues || queues.includes(job.queue))
      .map(({ queue, state, n }) => ({ queue, state, count: n })),
    groups: groups.rows
      .filter((row) => group === undefined || row.group === group)
      .map(({ group, status, n }) => ({ group, status, count: n })),
  };
}
