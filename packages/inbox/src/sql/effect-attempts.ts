import type { AttemptOutcome } from '@webhook-inbox/db/statuses';
import type { Statement } from './statement.ts';

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
 * Appends a batch's attempts, each numbered after its effect's last one, and drops the attempts of those effects
 * between the first and the last `keep`. An event purged meanwhile gets no rows (its attempts would be orphans).
 * Rows are written in key order, so two batches lock in one order.
 */
export function insertAttempts(
  records: readonly AttemptRecord[],
  keep: number = KEEP_LAST_ATTEMPTS,
): Statement {
  return {
    name: 'webhook_inbox_insert_attempts',
    text: `
      with input as (
        select * from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[],
                             $7::text[], $8::text[], $9::text[], $10::text[], $12::int[], $13::text[])
          as t(provider, event_id, effect, started_at, finished_at, duration_ms, outcome, error, worker, job_id,
               response_status, response_excerpt)
      ),
      added as (
        insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms,
                                     outcome, error, worker, job_id, response_status, response_excerpt)
        select i.provider, i.event_id, i.effect,
               coalesce((select max(a.attempt) from effect_attempts a
                          where a.provider = i.provider and a.event_id = i.event_id and a.effect = i.effect), 0) + 1,
               i.started_at, i.finished_at, i.duration_ms, i.outcome, i.error, i.worker, i.job_id,
               i.response_status, i.response_excerpt
          from input i
         where exists (select 1 from webhook_events e where e.provider = i.provider and e.event_id = i.event_id)
         order by i.provider, i.event_id, i.effect
        on conflict do nothing
        returning provider, event_id, effect, attempt
      )
      delete from effect_attempts a using added
       where a.provider = added.provider and a.event_id = added.event_id and a.effect = added.effect
         and a.attempt > 1 and a.attempt <= added.attempt - $11`,
    values: [
      records.map((r) => r.provider),
      records.map((r) => r.eventId),
      records.map((r) => r.effect),
      records.map((r) => r.startedAt),
      records.map((r) => r.finishedAt),
      records.map((r) => Math.round(r.durationMs)),
      records.map((r) => r.outcome),
      records.map((r) => r.error),
      records.map((r) => r.worker),
      records.map((r) => r.jobId),
      keep,
      records.map((r) => r.responseStatus ?? null),
      records.map((r) => r.responseExcerpt ?? null),
    ],
  };
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
