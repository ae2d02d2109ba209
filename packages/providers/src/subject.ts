import { rawJsonText } from './json.ts';
import { valuesAt } from './pointer.ts';
import { SUBJECT_POINTERS as PATHS } from './provider-paths.ts';
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

/**
 * Paths (pointer tokens joined by `/`) and headers whose values the provider compares without case (emails,
 * logins, repository names, domains): stored lower-cased, so a search finds them however they are typed. Every
 * other value (a Stripe customer `cus_I4TagvBaGok0Tj`, a message id) keeps its case: lower-cased, a copied id would
 * find nothing at the provider.
 */
const CASE_INSENSITIVE =
  /email|recipient|login|username|nickname|full_name|path_with_namespace|domain|^data\/to\/\*$/i;

/** At most this many values, each at most this long: a subject is a handful of identifiers, never a document. */
const MAX_VALUES = 8;
const MAX_VALUE_LENGTH = 200;

const SHOPIFY_HEADERS = ['x-shopify-shop-domain', 'x-shopify-event-id', 'x-shopify-webhook-id'];

/** Whether the provider type has subject paths (tests, docs). */
export function hasSubject(type: string): boolean {
  return Object.hasOwn(PATHS, type);
}

/**
 * The event's subject values, distinct (lower-cased where the provider's are case-insensitive), or `[]`: the paths' values that are strings or numbers
 * (numbers as written, so a Shopify id above 2^53 keeps its digits), and for Shopify its shop domain and bare
 * event id. A body that does not parse has none (it was verified and is stored all the same).
 */
export function subjectOf(event: VerifiedEvent): string[] {
  const type = event.sourceType ?? event.provider;
  const paths = Object.hasOwn(PATHS, type) ? PATHS[type] : undefined;
  if (!paths) return [];
  const values = new Set<string>();
  const add = (value: unknown, where: string) => {
    if (typeof value !== 'string' || value === '' || values.size >= MAX_VALUES) return;
    // U+001F joins the values on their way to the insert; NUL is a character PostgreSQL text cannot hold.
    if (value.length <= MAX_VALUE_LENGTH && !value.includes('\u0000') && !value.includes('\u001f'))
      values.add(CASE_INSENSITIVE.test(where) ? value.toLowerCase() : value);
  };
  if (type === 'shopify') for (const name of SHOPIFY_HEADERS) add(event.headers[name], name);
  let body: unknown = event.body;
  if (body === undefined) {
    try {
      body = JSON.parse(event.payloadText);
    } catch {
      return [...values];
    }
  }
  const read = () =>
    paths.flatMap((path) => valuesAt(body, path).map((value) => ({ where: path.join('/'), value })));
  let found = read();
  // A number JS cannot hold exactly (a Shopify id above 2^53): parse again keeping each number's digits. Rarely:
  // a reviver costs about six plain parses of the body.
  if (found.some(({ value }) => typeof value === 'number' && !Number.isSafeInteger(value))) {
    body = JSON.parse(event.payloadText, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' ? (context?.source ?? String(value)) : value,
    );
    found = read();
  }
  for (const { where, value } of found) {
    add(typeof value === 'number' ? String(value) : (rawJsonText(value) ?? value), where);
  }
  return [...values];
}
