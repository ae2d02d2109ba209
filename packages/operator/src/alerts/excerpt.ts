import { parseJsonLossless } from '@webhook-inbox/inbox';
import { maskString } from '../redact.ts';
import { CATALOGUE_EXCERPTS } from './catalogue-excerpts.ts';
import type { Fields } from './fields.ts';

/**
 * The payload excerpt an alert carries: only fields named below, per provider and event type (ids, type,
 * timestamps, amounts, currency, status, livemode, object names). Whatever else a payload holds (customer
 * details, addresses, `custom_fields`, `metadata`, notes, a field a provider adds next year) never reaches the
 * alert sink: an allow-list fails closed where a list of sensitive names fails open.
 */

// In the order shown: an excerpt is cut at its length limit, so what tells the event apart comes first.
const STRIPE_EVENT_HEAD: Fields = { id: true, type: true };
const STRIPE_EVENT_TAIL: Fields = {
  object: true,
  created: true,
  livemode: true,
  api_version: true,
  pending_webhooks: true,
  request: { id: true },
};

// Every Stripe object: what any event's `data.object` may show.
const STRIPE_OBJECT_HEAD: Fields = {
  id: true,
  object: true,
  status: true,
  amount: true,
  currency: true,
  customer: true,
};
const STRIPE_OBJECT_TAIL: Fields = { created: true, livemode: true };
const STRIPE_OBJECT: Fields = { ...STRIPE_OBJECT_HEAD, ...STRIPE_OBJECT_TAIL };

// By object, as the event type names it (`checkout.session` in `checkout.session.completed`).
const STRIPE_OBJECTS: Readonly<Record<string, Fields>> = {
  'checkout.session': {
    ...STRIPE_OBJECT_HEAD,
    payment_status: true,
    amount_total: true,
    amount_subtotal: true,
    mode: true,
    subscription: true,
    invoice: true,
    payment_intent: true,
    expires_at: true,
    ...STRIPE_OBJECT_TAIL,
  },
  'customer.subscription': {
    ...STRIPE_OBJECT_HEAD,
    latest_invoice: true,
    cancel_at_period_end: true,
    cancel_at: true,
    canceled_at: true,
    ended_at: true,
    current_period_start: true,
    current_period_end: true,
    trial_end: true,
    items: { object: true, data: { id: true, quantity: true, price: { id: true, product: true } } },
    ...STRIPE_OBJECT_TAIL,
  },
  invoice: {
    ...STRIPE_OBJECT_HEAD,
    subscription: true,
    billing_reason: true,
    amount_due: true,
    amount_paid: true,
    amount_remaining: true,
    subtotal: true,
    total: true,
    attempt_count: true,
    paid: true,
    payment_intent: true,
    period_start: true,
    period_end: true,
    ...STRIPE_OBJECT_TAIL,
  },
  payment_intent: {
    ...STRIPE_OBJECT_HEAD,
    amount_received: true,
    invoice: true,
    latest_charge: true,
    ...STRIPE_OBJECT_TAIL,
  },
  charge: {
    ...STRIPE_OBJECT_HEAD,
    failure_code: true,
    amount_captured: true,
    amount_refunded: true,
    captured: true,
    paid: true,
    refunded: true,
    payment_intent: true,
    invoice: true,
    ...STRIPE_OBJECT_TAIL,
  },
};

const SHOPIFY_RESOURCE: Fields = { id: true, admin_graphql_api_id: true, created_at: true, updated_at: true };

// By topic (`customers/redact`), else by resource (`orders` in `orders/create`); any other topic shows ids and
// timestamps only.
const SHOPIFY_TOPICS: Readonly<Record<string, Fields>> = {
  orders: {
    id: true,
    order_number: true,
    financial_status: true,
    fulfillment_status: true,
    total_price: true,
    currency: true,
    customer: { id: true },
    line_items: { id: true, product_id: true, variant_id: true, quantity: true, price: true, sku: true },
    subtotal_price: true,
    total_tax: true,
    total_discounts: true,
    presentment_currency: true,
    cancelled_at: true,
    cancel_reason: true,
    closed_at: true,
    test: true,
    confirmed: true,
    source_name: true,
    admin_graphql_api_id: true,
    created_at: true,
    processed_at: true,
    updated_at: true,
  },
  // The payload is the shop: its owner's name, email and address are left out.
  'app/uninstalled': {
    id: true,
    myshopify_domain: true,
    plan_name: true,
    created_at: true,
    updated_at: true,
  },
  'customers/data_request': {
    shop_id: true,
    shop_domain: true,
    customer: { id: true },
    orders_requested: true,
    data_request: { id: true },
  },
  'customers/redact': { shop_id: true, shop_domain: true, customer: { id: true }, orders_to_redact: true },
  'shop/redact': { shop_id: true, shop_domain: true },
};

// Standard Webhooks senders: the envelope, and the conventional names of what `data` is about.
const STANDARD_WEBHOOK: Fields = {
  type: true,
  timestamp: true,
  data: { id: true, object: true, type: true, status: true },
};

/** The fields an excerpt of this provider's event of this type may show. */
function fieldsFor(provider: string, type: string): Fields {
  if (provider === 'stripe') {
    const object = type.slice(0, Math.max(0, type.lastIndexOf('.')));
    const data: Fields = { object: STRIPE_OBJECTS[object] ?? STRIPE_OBJECT };
    return { ...STRIPE_EVENT_HEAD, data, ...STRIPE_EVENT_TAIL };
  }
  if (provider === 'shopify') {
    return SHOPIFY_TOPICS[type] ?? SHOPIFY_TOPICS[type.split('/')[0] ?? ''] ?? SHOPIFY_RESOURCE;
  }
  // A catalogue provider's own list (by its type, the source's default name); any other name is a Standard
  // Webhooks sender, or a source whose fields nobody listed: the envelope only.
  return CATALOGUE_EXCERPTS[provider] ?? STANDARD_WEBHOOK;
}

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
