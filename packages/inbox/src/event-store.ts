import { EVENT_STATUSES, type EventStatus } from '@webhook-inbox/db/statuses';
import type pg from 'pg';
import { parseJsonLossless } from './json.ts';

/** Read side of the event log, shared by the CLI and the admin API. */

export interface EventFilters {
  provider?: string;
  status?: EventStatus;
  type?: string;
  /** Only events received at or after this time. */
  since?: Date;
  /** At most this many (1..500). */
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
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
}

export interface EventPage {
  events: EventSummary[];
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
}

export class InvalidFilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFilterError';
  }
}

export function isEventStatus(value: string): value is EventStatus {
  return (EVENT_STATUSES as readonly string[]).includes(value);
}

const SUMMARY_COLUMNS = `
  provider, event_id as "eventId", type, status, source, attempts, last_error as "lastError",
  received_at as "receivedAt", processed_at as "processedAt"`;

// Newest first; the cursor is the last row's sort key, so pages stay stable while new events arrive.
export async function listEvents(pool: pg.Pool, filters: EventFilters = {}): Promise<EventPage> {
  const limit = filters.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new InvalidFilterError('limit must be 1..500');
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (filters.provider) where.push(`provider = ${param(filters.provider)}`);
  if (filters.status) where.push(`status = ${param(filters.status)}`);
  if (filters.type) where.push(`type = ${param(filters.type)}`);
  if (filters.since) where.push(`received_at >= ${param(filters.since)}`);
  if (filters.cursor) {
    const [receivedAt, provider, eventId] = decodeCursor(filters.cursor);
    where.push(
      `(received_at, provider, event_id) < (${param(receivedAt)}::timestamptz, ${param(provider)}, ${param(eventId)})`,
    );
  }
  const { rows } = await pool.query<EventSummary & { cursorAt: string }>(
    `select ${SUMMARY_COLUMNS}, to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "cursorAt"
       from webhook_events
      ${where.length ? `where ${where.join(' and ')}` : ''}
      order by received_at desc, provider desc, event_id desc
      limit ${param(limit + 1)}`,
    values,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    events: page.map(({ cursorAt: _, ...event }) => event),
    // Microsecond text, not the JS Date (milliseconds), so no row is skipped between pages.
    nextCursor:
      rows.length > limit && last ? encodeCursor([last.cursorAt, last.provider, last.eventId]) : null,
  };
}

export async function getEvent(
  pool: pg.Pool,
  provider: string,
  eventId: string,
): Promise<EventDetail | undefined> {
  const { rows } = await pool.query<Omit<EventDetail, 'effects' | 'payload'> & { payload: string | null }>(
    `select ${SUMMARY_COLUMNS}, headers, payload::text as payload
       from webhook_events where provider = $1 and event_id = $2`,
    [provider, eventId],
  );
  const event = rows[0];
  if (!event) return undefined;
  const effects = await pool.query<EffectRunRow>(
    `select effect, status, attempts, last_error as "lastError", idempotency_key as "idempotencyKey",
            started_at as "startedAt", completed_at as "completedAt", forced_at as "forcedAt"
       from effect_runs where provider = $1 and event_id = $2 order by effect`,
    [provider, eventId],
  );
  // Lossless: Shopify ids above 2^53 keep every digit.
  return {
    ...event,
    payload: event.payload === null ? null : parseJsonLossless(event.payload),
    effects: effects.rows,
  };
}

function encodeCursor(parts: [string, string, string]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
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

function decodeCursor(cursor: string): [string, string, string] {
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parts) &&
      parts.length === 3 &&
      parts.every((p) => typeof p === 'string' && !p.includes('\u0000')) &&
      isCursorTime(parts[0] as string)
    ) {
      return parts as [string, string, string];
    }
  } catch {
    // fall through
  }
  throw new InvalidFilterError('cursor is not one this API returned');
}
