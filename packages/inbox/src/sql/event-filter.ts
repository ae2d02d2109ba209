import { DEFAULT_GROUP, type EventStatus } from '@webhook-inbox/db/statuses';
import { groupRoutes } from './effect-routes.ts';
import { CASELESS_EVENT_ID_TYPES } from '@webhook-inbox/providers/subject';
import { payloadOf } from './event-payloads.ts';
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
 * - keys (a selection): the primary key, one probe per key;
 * - event id: the primary key `(provider, event_id)`; without a provider, each provider (found by a loose index
 *   scan of the same key) is probed;
 * - search (free text): the union of three ways in, each walked newest first and stopped at the page's end: the
 *   subject (`webhook_events_subject_idx`, GIN), an event id prefix (the primary key, each provider probed; a
 *   range scan where the database's collation is C, as `pnpm start`'s is), and the type, only when the text is a
 *   type some consumer group routes (`effect_routes`: a one-time filter, so other text costs nothing there);
 * - payload path: containment (`payload @> '{"data":{"object":{"customer":"cus_1"}}}'`) on each row's payload in
 *   `webhook_event_payloads` (one primary-key probe in the partition of its day), evaluated on the rows the other
 *   filters reach. It scans the time range it is given; a GIN index on `payload jsonb_path_ops` would answer it
 *   directly, at a cost on every insert (see the package README).
 */

/** Which events: every field optional (none: all of them). */
export interface EventFilter {
  provider?: string | undefined;
  type?: string | undefined;
  /** Types matching one of these patterns, `*` matching any run of characters (dots included). */
  typePatterns?: readonly string[] | undefined;
  /** The events' status in `group`: for the default group `webhook_events.status`, for another its row's. */
  status?: EventStatus | undefined;
  /**
   * The consumer group (default: the default group). Another narrows the set to the types it has effects for
   * (`effect_routes`), including events it never had (a backfill), and `status` is its row's.
   */
  group?: string | undefined;
  /**
   * Without `group`: `status` is the event's status in any of these groups (`'all'`: in any group at all), the
   * default group's being the event's own: a page over several groups (the console's "all groups").
   */
  statusInAny?: readonly string[] | 'all' | undefined;
  /** Received at or after. */
  since?: Date | undefined;
  /** Received before. */
  before?: Date | undefined;
  eventId?: string | undefined;
  /** Exactly these events (an operator's selection), each `[provider, eventId]`. */
  keys?: readonly EventKeyPair[] | undefined;
  /**
   * Free text: events whose id starts with it (a Shopify bare event id is in its subject), whose subject holds it
   * as one value (case-insensitive), or whose type it is (a type some group has effects for).
   */
  search?: string | undefined;
  /** False: `search` does not look in subjects (a role that sees them masked cannot find them one guess at a time). */
  searchSubjects?: boolean | undefined;
  /**
   * The providers (source names) whose event ids `search` matches without case, as their modules declare
   * (`caseless.eventId`: GitHub's delivery UUIDs); unset: the catalogue types that declare it, as source names.
   */
  caselessIdProviders?: readonly string[] | undefined;
  /** A payload path (`data.object.customer`) and the JSON it must hold there. */
  payload?: { path: string[]; json: string } | undefined;
  /**
   * Only events of the types these consumer groups have effects for (`effect_routes`): what a principal limited to
   * these groups may see. Undefined: no such limit.
   */
  visibleTo?: readonly string[] | undefined;
  /** Events whose `effect` is failing with this normalized error: a failure group (`failure-groups.ts`). */
  failure?: { effect: string; fingerprint: string } | undefined;
}

export type EventKeyPair = readonly [provider: string, eventId: string];

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

/** `text` as a LIKE pattern matching itself literally. */
function literal(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `text` as a LIKE pattern matching itself literally, then anything. */
function prefixPattern(text: string): string {
  return `${literal(text)}%`;
}

/** A type pattern (`invoice.*`) as a LIKE pattern: `*` is any run of characters, the rest literal. */
function typePattern(pattern: string): string {
  return pattern.split('*').map(literal).join('%');
}

/**
 * The ways a search reaches rows, as conditions on `webhook_events` (see the module's comment). A subject value is
 * stored as the provider writes it, lower-cased only where the provider's values are case-insensitive (emails,
 * logins, domains: `@webhook-inbox/providers/subject`), so the text matches as typed or lower-cased. An event id
 * starts with the text as typed; for the providers whose ids compare without case (UUIDs, written in one case),
 * also with it lower- or upper-cased, each a range of the primary key.
 */
function searchBranches(search: string, params: Params, filter: EventFilter): string[] {
  const text = params.add(search);
  const caseless = filter.caselessIdProviders ?? CASELESS_EVENT_ID_TYPES;
  const otherCases = [...new Set([search.toLowerCase(), search.toUpperCase()])].filter((c) => c !== search);
  const caselessIds =
    caseless.length > 0 && otherCases.length > 0
      ? [
          `provider = any(${params.add(caseless)}::text[]) and (${otherCases
            .map((c) => `event_id like ${params.add(prefixPattern(c))}`)
            .join(' or ')})`,
        ]
      : [];
  return [
    ...(filter.searchSubjects !== false ? [`subject && array[${text}, lower(${text})]`] : []),
    `provider = any(array(${PROVIDERS})) and event_id like ${params.add(prefixPattern(search))}`,
    ...caselessIds,
    `type = ${text} and exists (select from effect_routes where event_type = ${text})`,
  ];
}

/**
 * The filter as conditions on `webhook_events` (unqualified columns), their values added to `params`: for a
 * statement of another module that reads the events by a filter and its own table besides (a listener's next
 * events, `@webhook-inbox/operator/sql`'s `listeners.ts`).
 */
export function where(filter: EventFilter, params: Params): string[] {
  const clauses: string[] = [];
  if (filter.search) {
    clauses.push(`(${searchBranches(filter.search, params, filter).join(' or ')})`);
  }
  if (filter.provider) clauses.push(`provider = ${params.add(filter.provider)}`);
  else if (filter.eventId) clauses.push(`provider = any(array(${PROVIDERS}))`);
  if (filter.eventId) clauses.push(`event_id = ${params.add(filter.eventId)}`);
  if (filter.keys) {
    const providers = params.add(filter.keys.map(([provider]) => provider));
    const ids = params.add(filter.keys.map(([, eventId]) => eventId));
    clauses.push(`(provider, event_id) in (select * from unnest(${providers}::text[], ${ids}::text[]))`);
  }
  if (filter.type) clauses.push(`type = ${params.add(filter.type)}`);
  if (filter.typePatterns?.length) {
    clauses.push(`type like any(${params.add(filter.typePatterns.map(typePattern))}::text[])`);
  }
  const group = filter.group ?? DEFAULT_GROUP;
  if (filter.group === undefined && filter.statusInAny !== undefined) {
    if (filter.status) clauses.push(statusInAny(filter.status, filter.statusInAny, params));
  } else if (group === DEFAULT_GROUP) {
    if (filter.status) clauses.push(`status = ${params.add(filter.status)}`);
  } else {
    const name = params.add(group);
    clauses.push(groupRoutes(name, 'webhook_events.provider', 'webhook_events.type'));
    if (filter.status) {
      clauses.push(`exists (
        select from webhook_event_groups g
         where g.provider = webhook_events.provider and g.event_id = webhook_events.event_id
           and g.consumer_group = ${name} and g.status = ${params.add(filter.status)})`);
    }
  }
  if (filter.visibleTo) {
    clauses.push(
      groupRoutes(
        `any(${params.add(filter.visibleTo)}::text[])`,
        'webhook_events.provider',
        'webhook_events.type',
      ),
    );
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

/** The event's status is `status` in one of `groups` (`'all'`: any group). */
function statusInAny(status: EventStatus, groups: readonly string[] | 'all', params: Params): string {
  const value = params.add(status);
  const own = groups === 'all' || groups.includes(DEFAULT_GROUP) ? `status = ${value} or ` : '';
  const others = groups === 'all' ? '' : `and g.consumer_group = any(${params.add(groups)}::text[])`;
  return `(${own}exists (
    select from webhook_event_groups g
     where g.provider = webhook_events.provider and g.event_id = webhook_events.event_id
       and g.status = ${value} ${others}))`;
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
  const { search, ...rest } = filter;
  const clauses = where(rest, params);
  if (cursor) clauses.push(after(cursor, '<', params));
  const size = params.add(limit + 1);
  if (!search) {
    return {
      text: `select ${ROW_COLUMNS} from webhook_events ${whereText(clauses)} order by ${NEWEST} limit ${size}`,
      values: params.values,
    };
  }
  // One page from each way in, newest first, then the newest of their union: each branch stays on its index.
  const branches = searchBranches(search, params, filter).map(
    (branch) =>
      `(select ${ROW_COLUMNS} from webhook_events ${whereText([...clauses, branch])} order by ${NEWEST} limit ${size})`,
  );
  return {
    text: `select * from (${branches.join(' union ')}) webhook_events
            order by "receivedAt" desc, provider desc, "eventId" desc limit ${size}`,
    values: params.values,
  };
}

const NEWEST = 'received_at desc, provider desc, event_id desc';

/**
 * How many events match, counted up to `cap` (a count that stops there costs at most `cap` index entries): `n`
 * is exact when it is below `cap`, "at least `cap`" otherwise.
 */
export function countUpTo(filter: EventFilter, cap: number): Statement {
  const params = new Params();
  const { search, ...rest } = filter;
  const clauses = where(rest, params);
  const limit = params.add(cap);
  const sets = search
    ? searchBranches(search, params, filter).map(
        (branch) =>
          `(select provider, event_id from webhook_events ${whereText([...clauses, branch])} limit ${limit})`,
      )
    : [`(select provider, event_id from webhook_events ${whereText(clauses)} limit ${limit})`];
  return {
    text: `select count(*)::int as n from (select * from (${sets.join(' union ')}) s limit ${limit}) counted`,
    values: params.values,
  };
}

/** The planner's estimate of the table's rows (no scan): what an unfiltered total shows, labelled as such. */
export function estimateAll(): Statement {
  return {
    text: `select greatest(reltuples, 0)::bigint::text as n from pg_class where oid = 'webhook_events'::regclass`,
    values: [],
  };
}

/**
 * A payload search over at most `scan` events (the other filters', newest first after `cursor`): a containment
 * test reads each event's payload, so a search over a million events would take seconds; bounded, it answers in
 * a time that does not grow with the table. Each row answers with `edgeAt`/`edgeProvider`/`edgeId` (the last
 * event scanned, where the next scan starts) and `scanned`; with no match, one row of those alone (`eventId`
 * null).
 */
export function scanPayloads(
  filter: EventFilter & { payload: NonNullable<EventFilter['payload']> },
  limit: number,
  scan: number,
  cursor?: EventCursor,
): Statement {
  const params = new Params();
  const { payload, ...rest } = filter;
  const clauses = where(rest, params);
  if (cursor) clauses.push(after(cursor, '<', params));
  const json = params.add(containment(payload.path, payload.json));
  return {
    text: `with scanned as materialized (
        select ${ROW_COLUMNS}, event_id, received_at from webhook_events ${whereText(clauses)}
         order by ${NEWEST} limit ${params.add(scan)}),
      edge as (select "cursorAt", provider, event_id, (select count(*)::int from scanned) as scanned
                 from scanned order by received_at, provider, event_id limit 1)
      select m.*, edge."cursorAt" as "edgeAt", edge.provider as "edgeProvider", edge.event_id as "edgeId",
             edge.scanned
        from edge left join lateral (
          select s.* from scanned s where ${payloadOf('s', `p.payload @> ${json}::jsonb`)}
           order by ${NEWEST} limit ${params.add(limit + 1)}) m on true`,
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

/** An event filter's clause: the event's `effect` fails with this fingerprint (a failure group's bulk replay). */
export function failingWith(table: string, effect: string, fingerprint: string, params: Params): string {
  return `exists (
    select from effect_runs r
     where r.provider = ${table}.provider and r.event_id = ${table}.event_id and r.effect = ${params.add(effect)}
       and r.status = 'failed' and r.fingerprint = ${params.add(fingerprint)})`;
}
