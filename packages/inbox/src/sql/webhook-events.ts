import { DEFAULT_GROUP, type EventSource, type EventStatus } from '@webhook-inbox/db/statuses';
import type { Statement } from './statement.ts';

/**
 * Statements on `webhook_events` (one row per provider + event id: the event log and the dedupe key), except the
 * effect runner's, which are in `../effects/ledger.ts`.
 */

export interface NewEvent {
  provider: string;
  eventId: string;
  type: string;
  /** The verified body, as received: stored as jsonb. */
  payloadText: string;
  headers: Record<string, string>;
}

/** A row the receiver's inserts return: an event they created, and the other consumer groups it went to. */
export interface CreatedEventRow {
  provider: string;
  event_id: string;
  /** The consumer groups other than the default that got a `webhook_event_groups` row (and get a job). */
  groups: string[];
}

/**
 * The tail of both receiver inserts, on the events they created (`created`): one `webhook_event_groups` row per
 * other consumer group that has an effect for the event's type, read from `effect_routes` in the same
 * statement, so a group gets exactly the events inserted after its routes were committed (see
 * `lockEffectRoutes`); no rows, and nothing written, while no group but the default has routes. Answers each
 * created event with the groups it went to.
 */
const DELIVER_TO_GROUPS = `
  delivered as (
    insert into webhook_event_groups (provider, event_id, consumer_group)
    select distinct c.provider, c.event_id, r.consumer_group
      from created c
      join effect_routes r on r.provider = c.provider and r.event_type = c.type
     where r.consumer_group <> '${DEFAULT_GROUP}'
    on conflict do nothing
    returning provider, event_id, consumer_group)
  select c.provider, c.event_id,
         array(select d.consumer_group from delivered d
                where d.provider = c.provider and d.event_id = c.event_id order by 1) as groups
    from created c`;

/**
 * The receiver's insert, the whole point of the system: a redelivery finds the row and inserts nothing (no row
 * returned), so its caller enqueues nothing. A new event's payload goes to `webhook_event_payloads` in the same
 * statement, under the `received_at` its row was given (the partition of that day). Named: parsed and planned once
 * per connection, not on every event.
 */
export function insertEvent(event: NewEvent, source: EventSource): Statement {
  return {
    name: 'webhook_inbox_insert_event',
    text: `
  with created as (
    insert into webhook_events (provider, event_id, type, headers, source)
    values ($1, $2, $3, $5::jsonb, $6)
    on conflict (provider, event_id) do nothing
    returning provider, event_id, type, received_at),
  payload as (
    insert into webhook_event_payloads (provider, event_id, received_at, payload)
    select provider, event_id, received_at, $4::jsonb from created),
  ${DELIVER_TO_GROUPS}`,
    values: [
      event.provider,
      event.eventId,
      event.type,
      event.payloadText,
      JSON.stringify(event.headers),
      source,
    ],
  };
}

/**
 * Group commit's insert: many events in one statement, one row per array position, the same `ON CONFLICT DO
 * NOTHING` and delivery to groups as `insertEvent`, returning the keys this statement created (an absent key was
 * already recorded), whose payloads it writes to `webhook_event_payloads` as `insertEvent` does. Rows are inserted
 * in the order given (the arrays are read in order, nothing sorts them): callers pass each key once, sorted, so two
 * concurrent batches that share keys wait for each other in one order and never deadlock. The arrays are text; a
 * new row's payload is cast to jsonb on its way into `webhook_event_payloads`, so a payload PostgreSQL refuses
 * fails the statement with the same SQLSTATE as `insertEvent`. Named: its parameters are six arrays whatever the
 * batch's size, so one plan serves every batch.
 */
export function insertEvents(events: ReadonlyArray<{ event: NewEvent; source: EventSource }>): Statement {
  return {
    name: 'webhook_inbox_insert_events',
    text: `
  with batch as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
      as batch (provider, event_id, type, payload, headers, source)),
  created as (
    insert into webhook_events (provider, event_id, type, headers, source)
    select provider, event_id, type, headers::jsonb, source from batch
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
    ],
  };
}

/** The columns of an event's summary, named as `EventSummary` (event-store.ts) names them. */
const SUMMARY_COLUMNS = `
  provider, event_id as "eventId", type, status, source, attempts, last_error as "lastError",
  received_at as "receivedAt", processed_at as "processedAt"`;

export interface EventPageFilters {
  provider?: string;
  status?: EventStatus;
  type?: string;
  since?: Date;
  /** The previous page's last row: `received_at` as microsecond UTC text, provider, event id. */
  after?: readonly [receivedAt: string, provider: string, eventId: string];
}

/**
 * One page of the event log, newest first, `limit` rows at most. Each row carries `cursorAt`: its `received_at`
 * as microsecond text (a JS Date keeps milliseconds only), the sort key a next page starts after, so no row is
 * skipped or repeated between pages while new events arrive.
 */
export function selectEventPage(filters: EventPageFilters, limit: number): Statement {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (filters.provider) where.push(`provider = ${param(filters.provider)}`);
  if (filters.status) where.push(`status = ${param(filters.status)}`);
  if (filters.type) where.push(`type = ${param(filters.type)}`);
  if (filters.since) where.push(`received_at >= ${param(filters.since)}`);
  if (filters.after) {
    const [receivedAt, provider, eventId] = filters.after;
    where.push(
      `(received_at, provider, event_id) < (${param(receivedAt)}::timestamptz, ${param(provider)}, ${param(eventId)})`,
    );
  }
  return {
    text: `
      select ${SUMMARY_COLUMNS},
             to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "cursorAt"
        from webhook_events
      ${where.length ? `where ${where.join(' and ')}` : ''}
       order by received_at desc, provider desc, event_id desc
       limit ${param(limit)}`,
    values,
  };
}

/** An event row's payload as text (null once purged), read from the partition of its day. */
export const PAYLOAD_OF_EVENT = `
  (select p.payload::text from webhook_event_payloads p
    where p.provider = e.provider and p.event_id = e.event_id and p.received_at = e.received_at)`;

/** One event: its summary, headers and payload (`payload::text`, null once purged; parse it losslessly). */
export function selectEvent(provider: string, eventId: string): Statement {
  return {
    text: `
      select ${SUMMARY_COLUMNS}, headers, ${PAYLOAD_OF_EVENT} as payload
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

export interface EventKeyFilters {
  /** For the default group `webhook_events.status`; for another, its row's (none given: rows or not). */
  status?: string | undefined;
  /** The consumer group replayed; another than the default narrows the set to the types it has effects for. */
  group: string;
  provider?: string | undefined;
  type?: string | undefined;
  since?: Date | undefined;
}

/** Where a bulk replay is in its events: the last one it took, in `(received_at, provider, event_id)` order. */
export interface EventKeyCursor {
  /** `received_at` as PostgreSQL prints it (microseconds, which a JS Date would lose). */
  receivedAt: string;
  provider: string;
  eventId: string;
}

/** The conditions of a bulk replay's set: the filters, received up to `upTo` (null: now), after `after`. */
function eventKeyWhere(
  filters: EventKeyFilters,
  upTo: string | null,
  after: EventKeyCursor | null,
): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const where: string[] = [];
  if (filters.group === DEFAULT_GROUP) {
    if (filters.status !== undefined) where.push(`status = $${values.push(filters.status)}`);
  } else {
    const group = `$${values.push(filters.group)}`;
    where.push(
      `(provider, type) in (select provider, event_type from effect_routes where consumer_group = ${group})`,
    );
    if (filters.status !== undefined) {
      where.push(`exists (
        select from webhook_event_groups g
         where g.provider = webhook_events.provider and g.event_id = webhook_events.event_id
           and g.consumer_group = ${group} and g.status = $${values.push(filters.status)})`);
    }
  }
  where.push(upTo === null ? 'received_at <= now()' : `received_at <= $${values.push(upTo)}::timestamptz`);
  if (filters.provider) where.push(`provider = $${values.push(filters.provider)}`);
  if (filters.type) where.push(`type = $${values.push(filters.type)}`);
  if (filters.since) where.push(`received_at >= $${values.push(filters.since)}`);
  if (after) {
    const at = values.push(after.receivedAt);
    values.push(after.provider, after.eventId);
    where.push(`(received_at, provider, event_id) > ($${at}::timestamptz, $${at + 1}, $${at + 2})`);
  }
  return { where: where.join(' and '), values };
}

/**
 * Bulk replay, first: how many events match, received up to the database's clock now (`upTo`, which every
 * later page uses, so events arriving meanwhile are not in the set, nor is a replayed event that fails again).
 */
export function countEventKeys(filters: EventKeyFilters): Statement {
  const { where, values } = eventKeyWhere(filters, null, null);
  return {
    text: `select count(*)::int as n, now()::text as "upTo" from webhook_events where ${where}`,
    values,
  };
}

/** Bulk replay, then: the next `limit` keys of the set after `after`, oldest first (a keyset page). */
export function selectEventKeys(
  filters: EventKeyFilters,
  upTo: string,
  after: EventKeyCursor | null,
  limit: number,
): Statement {
  const { where, values } = eventKeyWhere(filters, upTo, after);
  return {
    text: `
      select provider, event_id as "eventId", received_at::text as "receivedAt" from webhook_events
       where ${where}
       order by received_at, provider, event_id limit $${values.push(limit)}`,
    values,
  };
}

/** Bulk replay stopped by a limit: how many events of its set remain after `after`. */
export function countRemainingEventKeys(
  filters: EventKeyFilters,
  upTo: string,
  after: EventKeyCursor,
): Statement {
  const { where, values } = eventKeyWhere(filters, upTo, after);
  return { text: `select count(*)::int as n from webhook_events where ${where}`, values };
}

// Retention touches only events that are done: anything received, processing or failed (awaiting a retry) is
// still in flight and its worker will read the payload, in the default group (`webhook_events.status`) or in any
// other (its `webhook_event_groups` row, read by primary key).
const finished = (events: string) => `
  ${events}.status in ('processed', 'dead')
  and not exists (
    select from webhook_event_groups g
     where g.provider = ${events}.provider and g.event_id = ${events}.event_id
       and g.status not in ('processed', 'dead'))`;

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
export const UNFINISHED_STATUSES = ['received', 'processing', 'failed', 'dead'] as const;

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
                       where status in ('received', 'processing', 'failed', 'dead')
                       group by status) counts) as "byStatus"`,
    values: [],
  };
}
