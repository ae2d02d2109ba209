import { rawJsonText } from './json.ts';
import type { VerifiedEvent } from './types.ts';

/**
 * An event's subject: the few values an operator searches for (a Stripe customer and its email, a Shopify shop and
 * customer, a GitHub repository), read from the verified body at ingest and stored lower-cased in
 * `webhook_events.subject` (GIN-indexed), so "which events are about cus_123" is an index lookup instead of a
 * payload scan. Keyed by the provider's type: a source named otherwise (`github-acme`) carries its type in
 * `VerifiedEvent.sourceType`.
 *
 * Pure: no I/O, no clock. A provider without an entry costs nothing; one with an entry reads the body its
 * verification parsed (`VerifiedEvent.body`), or parses the text once, before the recording transaction.
 */

/** Dotted paths into the body; `[]` after a key reads every element of an array. */
const PATHS: Readonly<Record<string, readonly string[]>> = {
  stripe: [
    'data.object.customer',
    'data.object.customer.id',
    'data.object.customer_email',
    'data.object.customer_details.email',
    'data.object.receipt_email',
    'data.object.billing_details.email',
  ],
  // The shop and the bare event id come from the headers (`subjectOf`); the body holds the resource.
  shopify: ['id', 'email', 'contact_email', 'customer.id', 'customer.email', 'domain'],
  github: ['repository.full_name', 'organization.login', 'sender.login'],
  gitlab: ['project.path_with_namespace', 'user_username', 'user.username'],
  bitbucket: ['repository.full_name', 'actor.nickname'],
  paddle: ['data.customer_id', 'data.customer.email', 'data.subscription_id'],
  clerk: ['data.id', 'data.email_addresses[].email_address', 'data.user_id'],
  resend: ['data.email_id', 'data.to[]'],
  postmark: ['Recipient', 'Email', 'MessageID'],
  sendgrid: ['email', 'sg_message_id'],
  mailgun: ['event-data.recipient', 'event-data.message.headers.message-id'],
  square: ['merchant_id', 'data.id'],
  calendly: ['payload.email', 'payload.event'],
  hubspot: ['objectId', 'portalId'],
  intercom: ['data.item.email', 'data.item.id', 'app_id'],
  linear: ['organizationId', 'data.id'],
  segment: ['userId', 'anonymousId', 'traits.email'],
  sentry: ['data.issue.id', 'installation.uuid'],
  typeform: ['form_response.form_id', 'form_response.token'],
  vercel: ['payload.project.id', 'payload.deployment.id'],
  woocommerce: ['id', 'customer_id', 'billing.email'],
  zendesk: ['detail.id', 'detail.requester_id'],
  discord: ['guild_id', 'data.guild_id', 'user.id'],
};

/** At most this many values, each at most this long: a subject is a handful of identifiers, never a document. */
const MAX_VALUES = 8;
const MAX_VALUE_LENGTH = 200;

const SHOPIFY_HEADERS = ['x-shopify-shop-domain', 'x-shopify-event-id', 'x-shopify-webhook-id'];

/** Whether the provider type has subject paths (tests, docs). */
export function hasSubject(type: string): boolean {
  return Object.hasOwn(PATHS, type);
}

/**
 * The event's subject values, lower-cased and distinct, or `[]`: the paths' values that are strings or numbers
 * (numbers as written, so a Shopify id above 2^53 keeps its digits), and for Shopify its shop domain and bare
 * event id. A body that does not parse has none (it was verified and is stored all the same).
 */
export function subjectOf(event: VerifiedEvent): string[] {
  const type = event.sourceType ?? event.provider;
  const paths = Object.hasOwn(PATHS, type) ? PATHS[type] : undefined;
  if (!paths) return [];
  const values = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value !== 'string' || value === '' || values.size >= MAX_VALUES) return;
    // U+001F joins the values on their way to the insert; NUL is a character PostgreSQL text cannot hold.
    if (value.length <= MAX_VALUE_LENGTH && !value.includes('\u0000') && !value.includes('\u001f'))
      values.add(value.toLowerCase());
  };
  if (type === 'shopify') for (const name of SHOPIFY_HEADERS) add(event.headers[name]);
  let body: unknown = event.body;
  if (body === undefined) {
    try {
      body = JSON.parse(event.payloadText);
    } catch {
      return [...values];
    }
  }
  let found = paths.flatMap((path) => valuesAt(body, path.split('.')));
  // A number JS cannot hold exactly (a Shopify id above 2^53): parse again keeping each number's digits. Rarely:
  // a reviver costs about six plain parses of the body.
  if (found.some((value) => typeof value === 'number' && !Number.isSafeInteger(value))) {
    body = JSON.parse(event.payloadText, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' ? (context?.source ?? String(value)) : value,
    );
    found = paths.flatMap((path) => valuesAt(body, path.split('.')));
  }
  for (const value of found) add(typeof value === 'number' ? String(value) : (rawJsonText(value) ?? value));
  return [...values];
}

function valuesAt(node: unknown, path: readonly string[]): unknown[] {
  if (path.length === 0) return [node];
  if (typeof node !== 'object' || node === null) return [];
  const [head = '', ...rest] = path;
  const each = head.endsWith('[]');
  const child = (node as Record<string, unknown>)[each ? head.slice(0, -2) : head];
  if (!each) return valuesAt(child, rest);
  return Array.isArray(child) ? child.flatMap((item) => valuesAt(item, rest)) : [];
}
