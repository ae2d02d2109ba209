import { parseJsonLossless } from '@webhook-inbox/inbox';
import { maskString } from '../redact.ts';
import { fieldsFor } from './excerpt-fields.ts';
import type { Fields } from './fields.ts';

/**
 * The payload excerpt an alert carries: only fields on its allow-list (excerpt-fields.ts), per provider and event type (ids, type,
 * timestamps, amounts, currency, status, livemode, object names). Whatever else a payload holds (customer
 * details, addresses, `custom_fields`, `metadata`, notes, a field a provider adds next year) never reaches the
 * alert sink: an allow-list fails closed where a list of sensitive names fails open.
 */

const MAX_ARRAY_ITEMS = 5;
const MAX_STRING = 100;
// A body larger than this is not parsed for an excerpt (the receiver's default body limit is 1 MiB).
const MAX_PARSE = 2 * 1024 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalar(value: unknown): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    // Allowed fields hold ids and codes; masking them too costs little and catches a sender's surprise.
    return maskString(value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value);
  }
  return undefined;
}

/** The first items of an array, each shown by `show` (null when nothing of it may be shown), and how many more. */
function firstItems(items: unknown[], show: (item: unknown) => unknown): unknown[] {
  const shown = items.slice(0, MAX_ARRAY_ITEMS).map((item) => show(item) ?? null);
  if (items.length > MAX_ARRAY_ITEMS) shown.push(`… ${items.length - MAX_ARRAY_ITEMS} more`);
  return shown;
}

/** The allowed fields of an object, or undefined when none is there. Walks the field list, never the payload. */
function pick(value: unknown, fields: Fields): Record<string, unknown> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Record<string, unknown> = {};
  let found = false;
  for (const [name, rule] of Object.entries(fields)) {
    if (!Object.hasOwn(value, name)) continue;
    const child = value[name];
    const show = rule === true ? scalar : (item: unknown) => pick(item, rule);
    const shown = Array.isArray(child) ? firstItems(child, show) : show(child);
    if (shown === undefined) continue;
    out[name] = shown;
    found = true;
  }
  return found ? out : undefined;
}

function parsed(payload: unknown): unknown {
  const text = payload instanceof Uint8Array ? new TextDecoder().decode(payload) : payload;
  if (typeof text !== 'string') return payload;
  if (text.length > MAX_PARSE) return undefined;
  try {
    return parseJsonLossless(text);
  } catch {
    return undefined;
  }
}

/**
 * A one-line excerpt of an event's payload for an alert: the fields allowed for its provider and type, as JSON, at
 * most `maxLength` characters. Undefined when the payload is not a JSON object or holds none of them.
 *
 * @example
 * alertExcerpt({ provider: 'stripe', type: 'checkout.session.completed', payload: event })
 * // '{"id":"evt_1","object":"event","type":"checkout.session.completed",...,"data":{"object":{"id":"cs_1",...}}}'
 */
export function alertExcerpt(
  event: { provider: string; type: string; payload?: unknown },
  maxLength = 500,
): string | undefined {
  const shown = pick(parsed(event.payload), fieldsFor(event.provider, event.type));
  if (shown === undefined) return undefined;
  const text = JSON.stringify(shown);
  return text.length <= maxLength ? text : `${text.slice(0, Math.max(0, maxLength - 1))}…`;
}
