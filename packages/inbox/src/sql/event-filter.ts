import { DEFAULT_GROUP, type EventStatus } from '@webhook-inbox/db/statuses';
import { payloadOf } from './event-payloads.ts';
import { failingWith } from './failure-groups.ts';
import { Params, type Statement } from './statement.ts';
import { SUMMARY_COLUMNS } from './webhook-events.ts';

/**
 * Statements that read `webhook_events` by a filter (kept apart from `webhook-events.ts`, which holds the rest of
 * the table's): the event log's pages, newest first (the admin API, the CLI, the console), and a bulk replay's set,
 * oldest first (the CLI, the console's operations), both in keyset pages on `(received_at, provider, event_id)`.
 *
 * Which index serves which filter (PostgreSQL 17, see packages/console/test/events-query-plan.test.ts):
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

/** Which events: every field optional (none: all of them). */
export interface EventFilter {
  provider?: string | undefined;
  type?: string | undefined;
  /** The events' status in `group`: for the default group `webhook_events.status`, for another its row's. */
  status?: EventStatus | undefined;
  /**
   * The consumer group (default: the default group). Another narrows the set to the types it has effects for
   * (`effect_routes`), including events it never had (a backfill), and `status` is its row's.
   */
  group?: string | undefined;
  /** Received at or after. */
  since?: Date | undefined;
  /** Received before. */
  before?: Date | undefined;
  eventId?: string | undefined;
  /** A payload path (`data.object.customer`) and the JSON it must hold there. */
  payload?: { path: string[]; json: string } | undefined;
  /** Events whose `effect` is failing with this normalized error: a failure group (`failure-groups.ts`). */
  failure?: { effect: string; fingerprint: string } | undefined;
}

/**
 * A row's place in the sort order, `[received_at, provider, event_id]`: the time as microsecond UTC text (a JS
 * Date keeps milliseconds only), so a page starts exactly after the last row of the one before, and no row is
 * skipped or repeated while new events arrive. Rows carry theirs as `cursorAt` (the time) with their key.
 */
export type EventCursor = readonly [receivedAt: string, provider: string, eventId: string];

/** A summary row as the filtered statements answer it (`SUMMARY_COLUMNS` and the row's cursor time). */
const ROW_COLUMNS = `${SUMMARY_COLUMNS},
  to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "cursorAt"`;

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
  const group = filter.group ?? DEFAULT_GROUP;
  if (group === DEFAULT_GROUP) {
    if (filter.status) clauses.push(`status = ${params.add(filter.status)}`);
  } else {
    const name = params.add(group);
    clauses.push(
      `(provider, type) in (select provider, event_type from effect_routes where consumer_group = ${name})`,
    );
    if (filter.status) {
      clauses.push(`exists (
        select from webhook_event_groups g
         where g.provider = webhook_events.provider and g.event_id = webhook_events.event_id
           and g.consumer_group = ${name} and g.status = ${params.add(filter.status)})`);
    }
  }
  if (filter.since) clauses.push(`received_at >= ${params.add(filter.since)}`);
  if (filter.before) clauses.push(`received_at < ${params.add(filter.before)}`);
  if (filter.failure) {
    clauses.push(failingWith('webhook_events', filter.failure.effect, filter.failure.fingerprint, params));
  }
  if (filter.payload) {
    const json = params.add(containment(filter.payload.path, filter.payload.json));
    clauses.push(payloadOf('webhook_events', `p.payload @> ${json}::jsonb`));
  }
  return clauses;
}

/** The rows of a bulk replay's set: matching, received up to `upTo` (null: the database's clock now). */
function inSet(filter: EventFilter, upTo: Date | string | null, params: Params): string[] {
  const received = upTo === null ? 'now()' : `${params.add(upTo)}::timestamptz`;
  return [...where(filter, params), `received_at <= ${received}`];
}

const after = (cursor: EventCursor, direction: '<' | '>', params: Params) =>
  `(received_at, provider, event_id) ${direction} (${params.add(cursor[0])}::timestamptz, ${params.add(cursor[1])}, ${params.add(cursor[2])})`;

const whereText = (clauses: string[]) => (clauses.length ? `where ${clauses.join(' and ')}` : '');

/**
 * One page of the event log, newest first, after `cursor`; asks for `limit + 1` rows, so whether the last one
 * came back says whether another page follows.
 */
export function listEvents(filter: EventFilter, limit: number, cursor?: EventCursor): Statement {
  const params = new Params();
  const clauses = where(filter, params);
  if (cursor) clauses.push(after(cursor, '<', params));
  return {
    text: `select ${ROW_COLUMNS} from webhook_events ${whereText(clauses)}
            order by received_at desc, provider desc, event_id desc
            limit ${params.add(limit + 1)}`,
    values: params.values,
  };
}

/**
 * A bulk replay's set, first: how many events it holds (those after `cursor` when given), received up to `upTo`,
 * and that instant as the database prints it (`upTo`; with `null`, the database's clock now), which every later
 * page uses: events arriving meanwhile are not in the set, nor is a replayed event that fails again.
 */
export function countEvents(
  filter: EventFilter,
  upTo: Date | string | null,
  cursor?: EventCursor,
): Statement {
  const params = new Params();
  const clauses = inSet(filter, upTo, params);
  if (cursor) clauses.push(after(cursor, '>', params));
  const at = upTo === null ? 'now()' : `${params.add(upTo)}::timestamptz`;
  return {
    text: `select count(*)::int as n, ${at}::text as "upTo" from webhook_events ${whereText(clauses)}`,
    values: params.values,
  };
}

/**
 * A bulk replay's set, then: its next `limit` events after `cursor`, oldest first. Replaying an event changes its
 * status, so a status filter matches fewer rows as the replay goes; the keyset cursor does not depend on it.
 */
export function nextEvents(
  filter: EventFilter,
  upTo: Date | string,
  limit: number,
  cursor: EventCursor | null,
): Statement {
  const params = new Params();
  const clauses = inSet(filter, upTo, params);
  if (cursor) clauses.push(after(cursor, '>', params));
  return {
    text: `select ${ROW_COLUMNS} from webhook_events ${whereText(clauses)}
            order by received_at, provider, event_id
            limit ${params.add(limit)}`,
    values: params.values,
  };
}
