import { payloadOf } from './event-payloads.ts';
import { Params, type Statement } from './statement.ts';

/**
 * Statements that read `webhook_events` by a filter (kept apart from `webhook-events.ts`, which holds the rest of
 * the table's): the event log's pages (newest first, keyset pagination) and the bulk replay's count, sample and
 * chunks (oldest first).
 *
 * Which index serves which filter (PostgreSQL 17, see test/events-query-plan.test.ts):
 * - none, provider, type, time range: `webhook_events_received_at_idx`, walked backwards, filtered, stopped
 *   at the page's end;
 * - status: `webhook_events_status_received_at_idx`;
 * - event id: the primary key `(provider, event_id)`; without a provider, each provider (found by a loose index
 *   scan of the same key) is probed;
 * - payload path: containment (`payload @> '{"data":{"object":{"customer":"cus_1"}}}'`) on each row's payload in
 *   `webhook_event_payloads` (one primary-key probe in the partition of its day), evaluated on the rows the other
 *   filters reach. It scans the time range it is given; a GIN index on `payload jsonb_path_ops` would answer it
 *   directly, at a cost on every insert (see the package README).
 */

/** A filter as the events page and the bulk replay take it; every field optional. */
export interface EventFilter {
  provider?: string;
  type?: string;
  status?: string;
  /** Received at or after. */
  from?: Date;
  /** Received before. */
  to?: Date;
  eventId?: string;
  /** A payload path (`data.object.customer`) and the JSON it must hold there. */
  payload?: { path: string[]; json: string };
}

/** `[received_at as ISO text with microseconds, provider, event_id]`: a row's place in the sort order. */
export type EventCursor = [string, string, string];

const CURSOR_AT = `to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const SUMMARY_COLUMNS = `
  provider, event_id as "eventId", type, status, source, attempts, last_error as "lastError",
  received_at as "receivedAt", processed_at as "processedAt", ${CURSOR_AT} as "cursorAt"`;

// Every provider in the table, one primary-key probe each (a loose index scan): a handful of rows, whatever the
// table's size.
const PROVIDERS = `
  with recursive p as (
    (select provider from webhook_events order by provider limit 1)
    union all
    select (select provider from webhook_events where provider > p.provider order by provider limit 1)
      from p where p.provider is not null
  )
  select provider from p where provider is not null`;

export function listProviders(): Statement {
  return { text: PROVIDERS, values: [] };
}

/** `{"data":{"object":{"customer":<json>}}}` for `payload @>`; the value's JSON text is kept as is (big ints). */
export function containment(path: string[], json: string): string {
  return path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, json);
}

function where(filter: EventFilter, params: Params): string[] {
  const clauses: string[] = [];
  if (filter.provider) clauses.push(`provider = ${params.add(filter.provider)}`);
  else if (filter.eventId) clauses.push(`provider = any(array(${PROVIDERS}))`);
  if (filter.eventId) clauses.push(`event_id = ${params.add(filter.eventId)}`);
  if (filter.type) clauses.push(`type = ${params.add(filter.type)}`);
  if (filter.status) clauses.push(`status = ${params.add(filter.status)}`);
  if (filter.from) clauses.push(`received_at >= ${params.add(filter.from)}`);
  if (filter.to) clauses.push(`received_at < ${params.add(filter.to)}`);
  if (filter.payload) {
    const json = params.add(containment(filter.payload.path, filter.payload.json));
    clauses.push(payloadOf('webhook_events', `p.payload @> ${json}::jsonb`));
  }
  return clauses;
}

const whereText = (clauses: string[]) => (clauses.length ? `where ${clauses.join(' and ')}` : '');

/** One page, newest first, after `cursor`; asks for `limit + 1` rows to know whether another page follows. */
export function listEvents(filter: EventFilter, limit: number, cursor?: EventCursor): Statement {
  const params = new Params();
  const clauses = where(filter, params);
  if (cursor) {
    clauses.push(
      `(received_at, provider, event_id) < (${params.add(cursor[0])}::timestamptz, ${params.add(cursor[1])}, ${params.add(cursor[2])})`,
    );
  }
  return {
    text: `select ${SUMMARY_COLUMNS} from webhook_events ${whereText(clauses)}
            order by received_at desc, provider desc, event_id desc
            limit ${params.add(limit + 1)}`,
    values: params.values,
  };
}

/** How many events a bulk replay over `filter` covers: those received up to `upTo`. */
export function countEvents(filter: EventFilter, upTo: Date): Statement {
  const params = new Params();
  const clauses = [...where(filter, params), `received_at <= ${params.add(upTo)}`];
  return {
    text: `select count(*)::int as n from webhook_events ${whereText(clauses)}`,
    values: params.values,
  };
}

/**
 * The next events of a bulk replay, oldest first, after `cursor`. Replaying an event changes its status, so a
 * status filter matches fewer rows as the operation goes; the keyset cursor does not depend on it.
 */
export function nextEvents(
  filter: EventFilter,
  upTo: Date,
  limit: number,
  cursor: EventCursor | null,
): Statement {
  const params = new Params();
  const clauses = [...where(filter, params), `received_at <= ${params.add(upTo)}`];
  if (cursor) {
    clauses.push(
      `(received_at, provider, event_id) > (${params.add(cursor[0])}::timestamptz, ${params.add(cursor[1])}, ${params.add(cursor[2])})`,
    );
  }
  return {
    text: `select ${SUMMARY_COLUMNS} from webhook_events ${whereText(clauses)}
            order by received_at, provider, event_id
            limit ${params.add(limit)}`,
    values: params.values,
  };
}
