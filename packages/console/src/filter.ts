import { EVENT_STATUSES, type EventStatus } from '@webhook-inbox/db/statuses';
import { parseDuration } from '@webhook-inbox/operator/duration';
import { GROUP_NAME_RULE, isGroupName } from '@webhook-inbox/inbox/queue';
import type { EventFilter } from '@webhook-inbox/inbox/event-store';
import { ConsoleError } from './errors.ts';

/**
 * The events filter as a page's query string carries it, and as a bulk replay operation stores it: strings, with
 * relative times ("24h") resolved to instants, so an operation replays the set its dry run counted.
 */
export interface FilterForm {
  /** Free text: an event id or its start, a provider's bare id, a customer, an email, a type (`EventFilter.search`). */
  q: string;
  provider: string;
  type: string;
  status: string;
  /** An ISO time, or a duration back from now (`24h`, `3d`). */
  from: string;
  to: string;
  eventId: string;
  /** `data.object.customer` */
  path: string;
  /** JSON (`42`, `"a"`, `true`) or, when it is not JSON, a string. */
  value: string;
  /** A consumer group other than the default: its events (the types it has effects for), its status. */
  group: string;
  /** With `fingerprint`: the events of a failure group (this effect failing with this normalized error). */
  effect: string;
  fingerprint: string;
}

const FIELDS = [
  'q',
  'provider',
  'type',
  'status',
  'from',
  'to',
  'eventId',
  'path',
  'value',
  'group',
  'effect',
  'fingerprint',
] as const;
const PATH_SEGMENT = /^[A-Za-z0-9_$-]+$/;

export function readForm(query: Record<string, unknown>): FilterForm {
  const text = (key: string) => (typeof query[key] === 'string' ? query[key].trim() : '');
  return Object.fromEntries(FIELDS.map((key) => [key, text(key)])) as unknown as FilterForm;
}

/** Checks a form and builds the filter; relative times count back from `now`. */
export function parseFilter(
  form: FilterForm,
  now: Date,
  caselessIdProviders?: readonly string[],
): { filter: EventFilter; resolved: FilterForm } {
  // PostgreSQL text cannot hold NUL: refused here, as the field's error, rather than failing the statement.
  const nul = FIELDS.find((key) => form[key].includes('\u0000'));
  if (nul) throw new ConsoleError('invalid_input', `${nul} must not contain a NUL character`);
  const filter: EventFilter = {};
  const resolved: FilterForm = { ...form };
  if (form.q) {
    filter.search = form.q;
    if (caselessIdProviders) filter.caselessIdProviders = caselessIdProviders;
  }
  if (form.provider) filter.provider = form.provider;
  if (form.type) filter.type = form.type;
  if (form.eventId) filter.eventId = form.eventId;
  if (form.status) {
    if (!(EVENT_STATUSES as readonly string[]).includes(form.status)) {
      throw invalid('status', `status must be one of ${EVENT_STATUSES.join(', ')}`);
    }
    filter.status = form.status as EventStatus;
  }
  if (form.effect || form.fingerprint) {
    if (!form.effect || !form.fingerprint)
      throw new ConsoleError('invalid_input', 'effect and fingerprint go together (a failure group)');
    filter.failure = { effect: form.effect, fingerprint: form.fingerprint };
  }
  if (form.group) {
    if (!isGroupName(form.group)) throw invalid('group', `group: ${GROUP_NAME_RULE}`);
    filter.group = form.group;
  }
  if (form.from) {
    filter.since = parseTime('from', form.from, now);
    resolved.from = filter.since.toISOString();
  }
  if (form.to) {
    filter.before = parseTime('to', form.to, now);
    resolved.to = filter.before.toISOString();
  }
  if (filter.since && filter.before && filter.since >= filter.before) {
    throw invalid('to', 'to must be later than from');
  }
  if (form.path || form.value) {
    const path = form.path.split('.');
    if (!form.path || !path.every((segment) => PATH_SEGMENT.test(segment))) {
      throw invalid('path', 'the payload path is keys separated by dots, such as data.object.customer');
    }
    filter.payload = { path, json: jsonText(form.value) };
  }
  return { filter, resolved };
}

/** An event's key as a selection holds it: `[provider, eventId]`. */
export type EventKeyPair = NonNullable<EventFilter['keys']>[number];

/** A selection's keys, each `[provider, eventId]` (two non-empty strings without NUL); throws on anything else. */
export function parseKeys(values: unknown): EventKeyPair[] {
  const pair = (value: unknown): value is [string, string] =>
    Array.isArray(value) &&
    value.length === 2 &&
    value.every((part) => typeof part === 'string' && part !== '' && !part.includes('\u0000'));
  if (!Array.isArray(values) || !values.every(pair)) {
    throw new ConsoleError('invalid_input', 'events are given as [provider, event id] pairs');
  }
  return values.map(([provider, eventId]) => [provider, eventId] as const);
}

/**
 * A bulk replay operation's stored filter as its runner replays it: the form's fields (`/bulk`), or a selection's
 * `keys` with its `group` (the lists' "Replay selected").
 */
export function storedFilter(
  stored: Record<string, unknown>,
  now: Date,
  caselessIdProviders?: readonly string[],
): EventFilter {
  const { filter } = parseFilter(readForm(stored), now, caselessIdProviders);
  if (stored.keys !== undefined) filter.keys = parseKeys(stored.keys);
  return filter;
}

/** The form as a query string, without empty fields. */
export function formQuery(form: FilterForm, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const key of FIELDS) if (form[key]) params.set(key, form[key]);
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params.toString();
}

function parseTime(field: 'from' | 'to', text: string, now: Date): Date {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    // A time without a zone (what a datetime-local input sends) is UTC, as every time the console shows.
    const date = new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`);
    if (!Number.isNaN(date.getTime())) return date;
  } else {
    try {
      return new Date(now.getTime() - parseDuration(text));
    } catch {
      // falls through to the error
    }
  }
  throw invalid(field, `${field} must be a UTC time (2026-12-03T10:00) or a duration such as 24h or 3d`);
}

/** A refusal of one field of the form: the events page shows the form again with it next to the field. */
function invalid(field: keyof FilterForm, message: string): ConsoleError {
  return new ConsoleError('invalid_input', message, { field });
}

/** The value as JSON text: kept as typed when it is JSON (a big integer keeps its digits), quoted otherwise. */
function jsonText(value: string): string {
  try {
    JSON.parse(value);
    return value;
  } catch {
    return JSON.stringify(value);
  }
}
