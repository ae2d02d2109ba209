import { countMinutesBefore, deleteMinutesBefore } from './per-minute.ts';
import type { Statement } from '@webhook-inbox/inbox/sql';

/**
 * Statements on `inbox_samples` (the inbox's state once a minute): the receiver's sampler, the console's overview,
 * retention.
 */

export interface InboxSample {
  eventsReceived: number;
  eventsProcessing: number;
  eventsFailed: number;
  eventsDead: number;
  oldestUnprocessedSeconds: number;
  jobsCreated: number;
  jobsRetry: number;
  jobsActive: number;
  failingEffects: Record<string, number>;
}

/**
 * The sample of the database's current minute. Every receiver samples; the first row of a minute stays and the
 * others insert nothing (`inserted` is false for them).
 */
export function insertInboxSample(sample: InboxSample): Statement {
  return {
    name: 'webhook_inbox_insert_inbox_sample',
    text: `
      insert into inbox_samples (minute, events_received, events_processing, events_failed, events_dead,
                                 oldest_unprocessed_seconds, jobs_created, jobs_retry, jobs_active,
                                 failing_effects)
      values (date_trunc('minute', now()), $1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
      on conflict (minute) do nothing
      returning true as inserted`,
    values: [
      sample.eventsReceived,
      sample.eventsProcessing,
      sample.eventsFailed,
      sample.eventsDead,
      Math.round(sample.oldestUnprocessedSeconds),
      sample.jobsCreated,
      sample.jobsRetry,
      sample.jobsActive,
      JSON.stringify(sample.failingEffects),
    ],
  };
}

/** Whether the database's current minute has its sample already (a sampler then reads nothing). */
export function currentMinuteSampled(): Statement {
  return {
    name: 'webhook_inbox_current_minute_sampled',
    text: `select exists (select 1 from inbox_samples where minute = date_trunc('minute', now())) as sampled`,
    values: [],
  };
}

/** The samples since `since`, oldest first: one row a minute at most (the primary key). */
export function selectSamplesSince(since: Date): Statement {
  return {
    text: `select minute, jobs_created + jobs_retry as "jobsWaiting", jobs_active as "jobsActive",
                  oldest_unprocessed_seconds as "oldestSeconds", events_failed as failed, events_dead as dead,
                  failing_effects as "failingEffects"
             from inbox_samples where minute >= $1 order by minute`,
    values: [since],
  };
}

/** Retention: a batch of samples older than `before` (see `deleteMinutesBefore`). */
export function deleteInboxSamples(before: Date, from: string, limit: number): Statement {
  return deleteMinutesBefore('inbox_samples', before, from, limit);
}

/** Retention's dry run: the samples a purge would delete. */
export function countInboxSamplesBefore(before: Date): Statement {
  return countMinutesBefore('inbox_samples', before);
}
