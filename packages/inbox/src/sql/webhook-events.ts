import {
  DEFAULT_GROUP,
  EVENT_STATUSES,
  SETTLED_STATUSES,
  sqlList,
  UNFINISHED_STATUSES,
  type EventSource,
} from '@webhook-inbox/db/statuses';
import { payloadOf } from './event-payloads.ts';
import type { Statement } from './statement.ts';

/**
 * Statements on `webhook_events` (one row per provider + event id: the event log and the dedupe key), except the
 * effect runner's, which are in `ledger.ts`.
 */

interface NewEvent {
  provider: string;
  eventId: string;
  type: string;
  /** The verified body, as received: stored as jsonb. */
  payloadText: string;
  headers: Record<string, string>;
}

/** Joins an event's subject values into the one text the insert splits (`chr(31)`). */
const SUBJECT_SEPARATOR = '\u001f';

/** A row the receiver's inserts return: an event they created, and the other consumer groups it went to. */
export interface CreatedEventRow {
  provider: string;
  event_id: string;
  /** The consumer groups other than the default that got a `webhook_event_groups` row (and get a job). */
  groups: string[];
}

/**
 * The tail of the receiver's insert, on the events it created (`created`): one `webhook_event_groups` row per
 * other consumer group that has an effect for the event's type (or for `*`: a destination's), read from `effect_routes` in the same statement,
 * so a group gets exactly the events inserted after its routes were committed (see `lockEffectRoutes`); no
 * rows, and nothing written, while no group but the default has routes. Answers each created event with the
 * groups it went to: the delivered rows grouped by event once, joined to the created ones.
 */
const DELIVER_TO_GROUPS = `
  delivered as (
    insert into webhook_event_groups (provider, event_id, consumer_group)
    select distinct c.provider, c.event_id, r.consumer_group
      from created c
      join effect_routes r on r.provider in (c.provider, '*') and r.event_type in (c.type, '*')
     where r.consumer_group <> '${DEFAULT_GROUP}'
    on conflict do nothing
    returning provider, event_id, consumer_group)
  select c.provider, c.event_id, coalesce(d.groups, '{}') as groups
    from created c
    left join (select provider, event_id, array_agg(consumer_group order by consumer_group) as groups
                 from delivered group by provider, event_id) d
      on d.provider = c.provider and d.event_id = c.event_id`;

/**
 * The receiver's insert, the whole point of the system, for a batch of events (the group commit's, or one:
 * `ingest()`): one row per array position, `ON CONFLICT DO NOTHING`, so a redelivery finds its row and inserts
 * nothing, and its caller enqueues nothing. Returns the keys this statement created (an absent key was already
 * recorded) and writes their payloads to `webhook_event_payloads` under the `received_at` each row was given (the
 * partition of that day), and delivers them to groups (`DELIVER_TO_GROUPS`). Rows are inserted in the order given
 * (the arrays are read in order, nothing sorts them): callers pass each key once, sorted, so two concurrent
 * batches that share keys wait for each other in one order and never deadlock. The arrays are text; a new row's
 * payload is cast to jsonb on its way into `webhook_event_payloads`, so a payload PostgreSQL refuses fails the
 * statement with its SQLSTATE. Each row's `subject` (see `@webhook-inbox/providers/subject`) travels as one text joined by
 * U+001F, which no subject value holds, and is split back into an array; none is null. Named: its parameters are
 * seven arrays whatever the batch's size, so one plan serves every batch.
 */
export function insertEvents(
  events: ReadonlyArray<{ event: NewEvent; source: EventSource; subject?: readonly string[] }>,
): Statement {
  return {
    name: 'webhook_inbox_insert_events',
    text: `
  with batch as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
      as batch (provider, event_id, type, payload, headers, source, subject)),
  created as (
    insert into webhook_events (provider, event_id, type, headers, source, subject)
    select provider, event_id, type, headers::jsonb, source, string_to_array(subject, chr(31)) from batch
    on conflict (provider, event_id) do nothing
    returning provider, event_id, type, received_at),
  payloads as (
    insert into webhook_event_payloads (provider, event_id, received_at, payload)
    select c.provider, c.event_id, c.received_at, b.payload::jsonb
      from created c join batch b using (provider, event_id)),
  ${DELIVER_TO_GROUPS}`,
    values: [
      events.map(({ event }) => event.provider),
      events.map(({ event }) => event.eventId),
      events.map(({ event }) => event.type),
      events.map(({ event }) => event.payloadText),
      events.map(({ event }) => JSON.stringify(event.headers)),
      events.map(({ source }) => source),
      events.map(({ subject }) => (subject?.length ? subject.join(SUBJECT_SEPARATOR) : null)),
    ],
  };
}

/** The columns of an event's summary, named as `EventSummary` (event-store.ts) names them. */
export const SUMMARY_COLUMNS = `
  provider, event_id as "eventId", type, status, source, attempts, last_error as "lastError",
  received_at as "receivedAt", processed_at as "processedAt",
  array_to_string(subject, ' ') as subject`;

/** An event row's (`e`) payload as text (null once purged), read from the partition of its day. */
export const PAYLOAD_OF_EVENT = payloadOf('e', 'p.payload::text');

/**
 * One event: its summary, headers and payload (null once purged). `payload::text` to parse losslessly, or `pretty`:
 * PostgreSQL's own indented text (`jsonb_pretty`; jsonb keeps numbers as numeric, so a Shopify id above 2^53
 * keeps every digit and JavaScript never parses it).
 */
export function selectEvent(
  provider: string,
  eventId: string,
  payload: 'text' | 'pretty' = 'text',
): Statement {
  const select = payload === 'pretty' ? 'jsonb_pretty(p.payload)' : 'p.payload::text';
  return {
    text: `
      select ${SUMMARY_COLUMNS}, headers, ${payloadOf('e', select)} as payload
        from webhook_events e where provider = $1 and event_id = $2`,
    values: [provider, eventId],
  };
}

/** Which of these event ids of one provider are recorded (reconciliation: the others are missing). */
export function selectRecordedIds(provider: string, eventIds: readonly string[]): Statement {
  return {
    text: `select event_id from webhook_events where provider = $1 and event_id = any($2::text[])`,
    values: [provider, eventIds],
  };
}

/**
 * Replay, in its transaction: the event's type and status, and its row locked, so a replay and a worker settling
 * the same event take turns.
 */
export function lockEvent(provider: string, eventId: string): Statement {
  return {
    text: `select type, status from webhook_events where provider = $1 and event_id = $2 for update`,
    values: [provider, eventId],
  };
}

/** Replay, before it enqueues the event's job again: the event shows `received` until an attempt starts. */
export function requeueEvent(provider: string, eventId: string): Statement {
  return {
    text: `update webhook_events set status = 'received' where provider = $1 and event_id = $2`,
    values: [provider, eventId],
  };
}

// Retention touches only events that are done: anything received, processing or failed (awaiting a retry) is
// still in flight and its worker will read the payload, in the default group (`webhook_events.status`) or in any
// other (its `webhook_event_groups` row, read by primary key).
const finished = (events: string) => `
  ${events}.status in ${sqlList(SETTLED_STATUSES)}
  and not exists (
    select from webhook_event_groups g
     where g.provider = ${events}.provider and g.event_id = ${events}.event_id
       and g.status not in ${sqlList(SETTLED_STATUSES)})`;

// The retention batch below picks its rows oldest first, locking them and skipping any row another transaction
// holds (the worker, a replay), then deletes exactly those rows by ctid. It is one transaction of at most `limit`
// rows, so an `INSERT ... ON CONFLICT` on one of those keys waits at most for one batch. Rows are walked by
// `received_at` from `from` (where the last batch stopped), so rows already deleted are not scanned again. It
// answers `n` (rows deleted) and `last` (the last row's `received_at`, the next `from`).

/**
 * Retention: deletes up to `limit` finished events received in [`from`, `before`), their effect ledger with them
 * (ON DELETE CASCADE); `effectRuns` counts those ledger rows.
 */
export function deleteFinishedEvents(before: Date, from: string, limit: number): Statement {
  return {
    text: `
      with batch as (
        delete from webhook_events
        where ctid = any(array(
          select ctid from webhook_events
          where received_at < $1::timestamptz and received_at >= $2::timestamptz
            and ${finished('webhook_events')}
          order by received_at
          limit $3
          for update skip locked))
        returning provider, event_id, received_at)
      select count(*)::int as n, max(received_at)::text as last,
             (select count(*)::int from effect_runs r join batch b using (provider, event_id)) as "effectRuns"
        from batch`,
    values: [before, from, limit],
  };
}

/**
 * Retention's dry run, read only: how many finished events a purge would delete (received before `keyCutoff`) and
 * the effect ledger rows that would go with them. Rows a transaction holds during a real run are left for the next
 * one, so these are upper bounds.
 */
export function countPurgeable(keyCutoff: Date): Statement {
  return {
    text: `
      select count(*)::int as events,
             (select count(*)::int from effect_runs r join webhook_events e using (provider, event_id)
               where e.received_at < $1 and ${finished('e')}) as "effectRuns"
        from webhook_events
       where received_at < $1 and ${finished('webhook_events')}`,
    values: [keyCutoff],
  };
}

/** The statuses `countUnfinished` counts: everything but `processed`, whose count only ever grows. */
export { UNFINISHED_STATUSES };

/**
 * Events per unfinished status, and how long the oldest event that still has work to do (received, processing,
 * failed: dead events wait for an operator, not for the worker) has waited, seconds (0 when none). Every part is
 * read from `webhook_events_status_received_at_idx`: a count of the rows of one status, and a `min` per status
 * (the least of three, so each is one index probe), so the cost follows the backlog, not the table.
 */
export function countUnfinished(): Statement {
  return {
    name: 'webhook_inbox_count_unfinished',
    text: `
      select coalesce(extract(epoch from now() - least(
               (select min(received_at) from webhook_events where status = 'received'),
               (select min(received_at) from webhook_events where status = 'processing'),
               (select min(received_at) from webhook_events where status = 'failed'))), 0)::float8
               as "oldestUnprocessedAgeSeconds",
             (select coalesce(json_object_agg(status, n), '{}')
                from (select status, count(*)::int as n
                        from webhook_events
                       where status in ${sqlList(UNFINISHED_STATUSES)}
                       group by status) counts) as "byStatus"`,
    values: [],
  };
}

/** The console's overview: events received since `since`, by their status now (one index range per status). */
export function countByStatusSince(since: Date): Statement {
  return {
    text: `select s.status, (select count(*)::int from webhook_events e
                               where e.status = s.status and e.received_at >= $1) as n
             from unnest($2::text[]) as s(status)`,
    values: [since, EVENT_STATUSES],
  };
}

/**
 * The console's overview: events waiting for a retry or dead in any of `groups`, whenever they arrived (what needs
 * an operator). Each figure counts events, not an event once per group: an event dead in two groups is one dead
 * event, and an event failed in one group and dead in another counts in both figures. The default group's status
 * is the event's own (`webhook_events_status_received_at_idx`); another group's its row's (the partial index of
 * unfinished rows).
 */
export function countOpen(groups: readonly string[]): Statement {
  return {
    text: `
      select count(*) filter (where failed)::int as failed, count(*) filter (where dead)::int as dead
        from (select bool_or(status = 'failed') as failed, bool_or(status = 'dead') as dead
                from (select provider, event_id, status from webhook_events
                       where status in ('failed', 'dead') and $2::boolean
                      union all
                      select provider, event_id, status from webhook_event_groups
                       where status in ('failed', 'dead') and consumer_group = any($1::text[])) open
               group by provider, event_id) events`,
    values: [groups.filter((group) => group !== DEFAULT_GROUP), groups.includes(DEFAULT_GROUP)],
  };
}

/** Events received per bucket of `bucketSeconds` since `since` (a `received_at` index range), by status now. */
export function countPerBucket(since: Date, bucketSeconds: number): Statement {
  return {
    text: `select date_bin($2 * interval '1 second', received_at, $1) as bucket, status, count(*)::int as n
             from webhook_events where received_at >= $1
            group by 1, 2 order by 1`,
    values: [since, bucketSeconds],
  };
}
