import { rawJsonText } from './json.ts';
import { valuesAt } from './pointer.ts';
import { SUBJECT_HEADERS, SUBJECT_READS as PATHS } from './provider-paths.ts';
import type { VerifiedEvent } from './types.ts';

/**
 * An event's subject: the few values an operator searches for (a Stripe customer and its email, a Shopify shop and
 * customer, a GitHub repository), read from the verified body at ingest and stored in
 * `webhook_events.subject` (GIN-indexed), so "which events are about cus_123" is an index lookup instead of a
 * payload scan. Keyed by the provider's type: a source named otherwise (`github-acme`) carries its type in
 * `VerifiedEvent.sourceType`.
 *
 * Pure: no I/O, no clock. A provider without an entry costs nothing; one with an entry reads the body its
 * verification parsed (`VerifiedEvent.body`), or parses the text once, before the recording transaction.
 */

/** At most this many values, each at most this long: a subject is a handful of identifiers, never a document. */
const MAX_VALUES = 8;
const MAX_VALUE_LENGTH = 200;

/** Whether the provider type has subject paths (tests, docs). */
export function hasSubject(type: string): boolean {
  return Object.hasOwn(PATHS, type) || Object.hasOwn(SUBJECT_HEADERS, type);
}

/**
 * The event's subject values, distinct, or `[]`: the values at its type's subject pointers that are strings or
 * numbers (numbers as written, so a Shopify id above 2^53 keeps its digits) and those of its subject headers
 * (Shopify's shop domain and bare event id), each lower-cased where the provider's module declares it caseless
 * (`caseless.subject`). A body that does not parse has none (it was verified and is stored all the same).
 */
export function subjectOf(event: VerifiedEvent): string[] {
  const type = event.sourceType ?? event.provider;
  const paths = (Object.hasOwn(PATHS, type) && PATHS[type]) || [];
  const headers = (Object.hasOwn(SUBJECT_HEADERS, type) && SUBJECT_HEADERS[type]) || [];
  if (paths.length === 0 && headers.length === 0) return [];
  const values = new Set<string>();
  const add = (value: unknown, caseless: boolean) => {
    if (typeof value !== 'string' || value === '' || values.size >= MAX_VALUES) return;
    // U+001F joins the values on their way to the insert; NUL is a character PostgreSQL text cannot hold.
    if (value.length <= MAX_VALUE_LENGTH && !value.includes('\u0000') && !value.includes('\u001f'))
      values.add(caseless ? value.toLowerCase() : value);
  };
  for (const { where, caseless } of headers) add(event.headers[where], caseless);
  let body: unknown = event.body;
  if (body === undefined) {
    try {
      body = JSON.parse(event.payloadText);
    } catch {
      return [...values];
    }
  }
  const read = () =>
    paths.flatMap(({ where, caseless }) => valuesAt(body, where).map((value) => ({ caseless, value })));
  let found = read();
  // A number JS cannot hold exactly (a Shopify id above 2^53): parse again keeping each number's digits. Rarely:
  // a reviver costs about six plain parses of the body.
  if (found.some(({ value }) => typeof value === 'number' && !Number.isSafeInteger(value))) {
    body = JSON.parse(event.payloadText, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' ? (context?.source ?? String(value)) : value,
    );
    found = read();
  }
  for (const { caseless, value } of found) {
    add(typeof value === 'number' ? String(value) : (rawJsonText(value) ?? value), caseless);
  }
  return [...values];
}

/** The provider types whose event ids compare without case (their modules' `caseless.eventId`): the id search's. */
export { CASELESS_EVENT_ID_TYPES, caselessIdProviders } from './provider-paths.ts';
