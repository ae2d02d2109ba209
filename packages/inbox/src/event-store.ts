import { DEFAULT_GROUP, EVENT_STATUSES, type EventStatus } from '@webhook-inbox/db/statuses';
import type pg from 'pg';
import { parseJsonLossless } from './json.ts';
import type { EventCursor, EventFilter } from './sql/event-filter.ts';
import type { Statement } from './sql/statement.ts';
import type { AttemptRow } from './sql/effect-attempts.ts';
import {
  effectAttempts,
  effectRoutes,
  effectRuns,
  eventFilter,
  idempotencyKeys,
  webhookEventGroups,
  webhookEvents,
} from './sql/index.ts';
import type { EventGroupRow } from './sql/webhook-event-groups.ts';

export type { AttemptRow, EventCursor, EventFilter, EventGroupRow };

/** Read side of the event log, shared by the CLI and the admin API. */

/** The event log's filter as the admin API and the CLI take it: a few of `EventFilter`'s, a size, a cursor. */
export interface EventFilters extends Pick<
  EventFilter,
  'provider' | 'status' | 'type' | 'since' | 'search' | 'caselessIdProviders' | 'visibleTo' | 'group'
> {
  /** At most this many (1..500). */
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string | undefined;
}

export interface EventSummary {
  provider: string;
  eventId: string;
  type: string;
  status: EventStatus;
  source: string;
  attempts: number;
  lastError: string | null;
  receivedAt: Date;
  processedAt: Date | null;
  /** What the event is about (a customer, a shop, a repository), space-separated; null when none was read. */
  subject: string | null;
}

/**
 * An event as the event log lists it: `status`, `attempts`, `lastError` and `processedAt` are those of `group`
 * (the default group's are the event's own; another group's its `webhook_event_groups` row, `none` when the group
 * never had the event), and `groups` its rows in the other groups, limited to the reader's (`visibleTo`).
 */
export interface ListedEvent extends Omit<EventSummary, 'status'> {
  status: EventStatus | 'none';
  /** The consumer group whose status the event's own fields are. */
  group: string;
  groups: EventGroupRow[];
}

export interface EventPage {
  events: ListedEvent[];
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

export interface EffectRunRow {
  effect: string;
  status: string;
  attempts: number;
  lastError: string | null;
  idempotencyKey: string;
  startedAt: Date | null;
  completedAt: Date | null;
  forcedAt: Date | null;
}

export interface EventDetail extends EventSummary {
  headers: Record<string, string>;
  /** Null once retention purged it. */
  payload: unknown;
  effects: EffectRunRow[];
  /** Every kept attempt of its effects (the first and the last 20 of each), by effect, oldest first. */
  attemptHistory: AttemptRow[];
  /**
   * Its status in each consumer group other than the default that has it (the default group's is the event's
   * own `status`); empty when only the default group has effects for its type.
   */
  groups: EventGroupRow[];
  /**
   * Its completed effects that another event of their scope ran (a welcome email once per account, sent for an
   * earlier event): which event, and when. Such an effect completed here in no attempt.
   */
  completedBy: CompletedByRow[];
}

/**
 * An event as `getEvent` answers it: `status`, `attempts`, `lastError` and `processedAt` are `group`'s (`none`
 * when that group never had the event).
 */
export interface GroupEventDetail extends Omit<EventDetail, 'status'> {
  status: EventStatus | 'none';
  /** The consumer group whose status, attempts, error and processing time are the event's own fields. */
  group: string;
}

/** A scoped effect of this event that `provider`/`eventId` completed. */
export interface CompletedByRow {
  effect: string;
  provider: string;
  eventId: string;
  completedAt: Date | null;
}

/** Runs one statement and returns its rows: a pool's query, or the console's read under its deadline. */
export type ReadRows = <T extends pg.QueryResultRow>(statement: Statement) => Promise<T[]>;

/** A filter the event log cannot use; `field` names it (the CLI reports it as `--<field>`, exit code 2). */
export class InvalidFilterError extends Error {
  readonly field: 'limit' | 'cursor' | 'since';
  constructor(message: string, field: InvalidFilterError['field']) {
    super(message);
    this.name = 'InvalidFilterError';
    this.field = field;
  }
}

export function isEventStatus(value: string): value is EventStatus {
  return (EVENT_STATUSES as readonly string[]).includes(value);
}

// Newest first; the cursor is the last row's sort key, so pages stay stable while new events arrive.
export async function listEvents(pool: pg.Pool, filters: EventFilters = {}): Promise<EventPage> {
  const limit = filters.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new InvalidFilterError('limit must be 1..500', 'limit');
  if (filters.since && Number.isNaN(filters.since.getTime()))
    throw new InvalidFilterError('since is not a valid time', 'since');
  const { limit: _, cursor, ...filter } = filters;
  const after = cursor ? decodeCursor(cursor) : undefined;
  const { rows } = await pool.query<EventSummary & { cursorAt: string }>(
    eventFilter.listEvents(filter, limit, after),
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const groupRows = await pool.query<EventGroupRow & { provider: string; eventId: string }>(
    webhookEventGroups.selectGroupsOf(page, filter.visibleTo),
  );
  const rowsOf = new Map<string, EventGroupRow[]>();
  for (const { provider, eventId, ...row } of groupRows.rows) {
    const key = `${provider}\u0000${eventId}`;
    rowsOf.set(key, [...(rowsOf.get(key) ?? []), row]);
  }
  const group = filter.group ?? DEFAULT_GROUP;
  return {
    events: page.map(({ cursorAt: _at, ...event }) =>
      inGroup(event, group, rowsOf.get(`${event.provider}\u0000${event.eventId}`) ?? []),
    ),
    nextCursor: rows.length > limit && last ? encodeCursor(cursorOf(last)) : null,
  };
}

/**
 * The event with `group`'s status, attempts, error and processing time as its own: the default group's are the
 * event row's, another group's its row's (`none`, nothing attempted, when it has none).
 */
export function inGroup<T extends EventSummary>(
  event: T,
  group: string,
  groups: EventGroupRow[],
): Omit<T, 'status'> & { status: EventStatus | 'none'; group: string; groups: EventGroupRow[] } {
  if (group === DEFAULT_GROUP) return { ...event, group, groups };
  const own = groups.find((row) => row.group === group);
  return {
    ...event,
    group,
    groups,
    status: own?.status ?? 'none',
    attempts: own?.attempts ?? 0,
    lastError: own?.lastError ?? null,
    processedAt: own?.processedAt ?? null,
  };
}

/** A row's place in the event log's order (`EventCursor`), from its key and `cursorAt`. */
export function cursorOf(row: { cursorAt: string; provider: string; eventId: string }): EventCursor {
  return [row.cursorAt, row.provider, row.eventId];
}

export interface GetEventOptions {
  /**
   * The consumer group whose status, attempts, error and processing time are the event's own fields (default:
   * the default group's).
   */
  group?: string | undefined;
  /**
   * The consumer groups the reader is limited to (an API token's): the event is there only when one of them has
   * an effect for its type, and it comes with only their effects, attempts and group rows. Undefined: all of it.
   */
  visibleTo?: readonly string[] | undefined;
}

/**
 * One event with its effects, attempts and consumer-group rows, as every surface shows it (the admin API, the CLI,
 * the worker's operations); undefined when there is none, or none the reader may see (`visibleTo`).
 */
export async function getEvent(
  pool: pg.Pool,
  provider: string,
  eventId: string,
  options: GetEventOptions = {},
): Promise<GroupEventDetail | undefined> {
  const { rows } = await pool.query<
    Omit<EventDetail, 'effects' | 'attemptHistory' | 'groups' | 'completedBy' | 'payload'> & {
      payload: string | null;
    }
  >(webhookEvents.selectEvent(provider, eventId));
  const event = rows[0];
  if (!event) return undefined;
  const visible = options.visibleTo && (await visibleEffects(pool, event, options.visibleTo));
  if (visible?.size === 0) return undefined;
  const effects = await pool.query<EffectRunRow>(effectRuns.selectEffectRuns(provider, eventId));
  const groups = await pool.query<EventGroupRow>(webhookEventGroups.selectEventGroups(provider, eventId));
  const attempts = await pool.query<AttemptRow>(effectAttempts.selectAttempts(provider, eventId));
  const shown = <T extends { effect: string }>(row: T) => !visible || visible.has(row.effect);
  const shownEffects = effects.rows.filter(shown);
  const group = options.group ?? DEFAULT_GROUP;
  const own = groups.rows.find((row) => row.group === group);
  // Lossless: Shopify ids above 2^53 keep every digit.
  return {
    ...event,
    ...(group === DEFAULT_GROUP
      ? {}
      : {
          status: own?.status ?? 'none',
          attempts: own?.attempts ?? 0,
          lastError: own?.lastError ?? null,
          processedAt: own?.processedAt ?? null,
        }),
    group,
    payload: event.payload === null ? null : parseJsonLossless(event.payload),
    effects: shownEffects,
    attemptHistory: attempts.rows.filter(shown),
    groups: groups.rows.filter((row) => !options.visibleTo || options.visibleTo.includes(row.group)),
    completedBy: await completers(
      async <T extends pg.QueryResultRow>(statement: Statement) => (await pool.query<T>(statement)).rows,
      provider,
      eventId,
      shownEffects,
    ),
  };
}

/**
 * The other events that completed these effects' keys (a scope's key), one row per effect so completed: the
 * event's `completedBy`, read by `getEvent` and the console's event page.
 */
export async function completers(
  readRows: ReadRows,
  provider: string,
  eventId: string,
  effects: readonly EffectRunRow[],
): Promise<CompletedByRow[]> {
  const completed = effects.filter((run) => run.status === 'completed');
  if (completed.length === 0) return [];
  const rows = await readRows<Omit<CompletedByRow, 'effect'> & { key: string }>(
    idempotencyKeys.selectCompletedByOthers(
      completed.map((run) => run.idempotencyKey),
      provider,
      eventId,
    ),
  );
  const byKey = new Map(rows.map(({ key, ...row }) => [key, row]));
  return completed.flatMap((run) => {
    const by = byKey.get(run.idempotencyKey);
    return by ? [{ effect: run.effect, ...by }] : [];
  });
}

/** The effects the groups' workers run for the event's type: empty when it is none of theirs. */
async function visibleEffects(
  pool: pg.Pool,
  event: { provider: string; type: string },
  groups: readonly string[],
): Promise<Set<string>> {
  const { rows } = await pool.query<{ effect: string }>(
    effectRoutes.selectGroupsEffects(event.provider, event.type, groups),
  );
  return new Set(rows.map((row) => row.effect));
}

/** A cursor as the event log's pages hand it out: opaque, URL-safe. */
export function encodeCursor(cursor: EventCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

// What encodeCursor writes: a UTC time to the microsecond, then a provider and an event key (never NUL, which
// PostgreSQL text cannot hold).
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A real moment from 1970 on (so both JavaScript and PostgreSQL read it the same), written as encodeCursor does. */
function isCursorTime(text: string): boolean {
  if (!CURSOR_TIME.test(text)) return false;
  const date = new Date(text);
  return date.getTime() >= 0 && date.toISOString().slice(0, 23) === text.slice(0, 23);
}

/** The cursor `encodeCursor` wrote; anything else throws `InvalidFilterError` (field `cursor`). */
export function decodeCursor(cursor: string): EventCursor {
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parts) &&
      parts.length === 3 &&
      parts.every((p) => typeof p === 'string' && !p.includes('\u0000')) &&
      isCursorTime(parts[0] as string)
    ) {
      return parts as unknown as EventCursor;
    }
  } catch {
    // fall through
  }
  throw new InvalidFilterError('cursor is not one this API returned', 'cursor');
}
