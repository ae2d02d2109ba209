import { pointerTokens } from '@webhook-inbox/providers/pointer';
import { EXCERPT_POINTERS } from '@webhook-inbox/providers/paths';
import { fieldsOf, type Fields } from './fields.ts';

// What an alert's excerpt may show, per provider and event type (ids, type, timestamps, amounts, currency, status,
// livemode, object names), as JSON pointers (`*` marks an array, whose first items are shown). The catalogue's
// lists are its providers' own (`excerpt` in each definition); Stripe's and Shopify's, which depend on the event
// type, are here. In the order shown: an excerpt is cut at its length limit, so what tells the event apart comes
// first.

const tree = (pointers: readonly string[]): Fields => fieldsOf(pointers.map(pointerTokens));
const under = (prefix: string, pointers: readonly string[]) =>
  pointers.map((pointer) => `${prefix}${pointer}`);

const STRIPE_EVENT_HEAD = ['/id', '/type'];
const STRIPE_EVENT_TAIL = [
  '/object',
  '/created',
  '/livemode',
  '/api_version',
  '/pending_webhooks',
  '/request/id',
];

// Every Stripe object: what any event's `data.object` may show.
const STRIPE_OBJECT_HEAD = ['/id', '/object', '/status', '/amount', '/currency', '/customer'];
const STRIPE_OBJECT_TAIL = ['/created', '/livemode'];
const STRIPE_OBJECT = [...STRIPE_OBJECT_HEAD, ...STRIPE_OBJECT_TAIL];

// By object, as the event type names it (`checkout.session` in `checkout.session.completed`).
const STRIPE_OBJECTS: Readonly<Record<string, readonly string[]>> = {
  'checkout.session': [
    ...STRIPE_OBJECT_HEAD,
    '/payment_status',
    '/amount_total',
    '/amount_subtotal',
    '/mode',
    '/subscription',
    '/invoice',
    '/payment_intent',
    '/expires_at',
    ...STRIPE_OBJECT_TAIL,
  ],
  'customer.subscription': [
    ...STRIPE_OBJECT_HEAD,
    '/latest_invoice',
    '/cancel_at_period_end',
    '/cancel_at',
    '/canceled_at',
    '/ended_at',
    '/current_period_start',
    '/current_period_end',
    '/trial_end',
    '/items/object',
    '/items/data/*/id',
    '/items/data/*/quantity',
    '/items/data/*/price/id',
    '/items/data/*/price/product',
    ...STRIPE_OBJECT_TAIL,
  ],
  invoice: [
    ...STRIPE_OBJECT_HEAD,
    '/subscription',
    '/billing_reason',
    '/amount_due',
    '/amount_paid',
    '/amount_remaining',
    '/subtotal',
    '/total',
    '/attempt_count',
    '/paid',
    '/payment_intent',
    '/period_start',
    '/period_end',
    ...STRIPE_OBJECT_TAIL,
  ],
  payment_intent: [
    ...STRIPE_OBJECT_HEAD,
    '/amount_received',
    '/invoice',
    '/latest_charge',
    ...STRIPE_OBJECT_TAIL,
  ],
  charge: [
    ...STRIPE_OBJECT_HEAD,
    '/failure_code',
    '/amount_captured',
    '/amount_refunded',
    '/captured',
    '/paid',
    '/refunded',
    '/payment_intent',
    '/invoice',
    ...STRIPE_OBJECT_TAIL,
  ],
};

/** A Stripe event's fields, its `data.object` read by the object's own list. */
const stripeEvent = (object: readonly string[]): Fields =>
  tree([...STRIPE_EVENT_HEAD, ...under('/data/object', object), ...STRIPE_EVENT_TAIL]);
const STRIPE_BY_OBJECT: ReadonlyMap<string, Fields> = new Map(
  Object.entries(STRIPE_OBJECTS).map(([object, fields]) => [object, stripeEvent(fields)]),
);
const STRIPE_ANY = stripeEvent(STRIPE_OBJECT);

const SHOPIFY_RESOURCE = tree(['/id', '/admin_graphql_api_id', '/created_at', '/updated_at']);

// By topic (`customers/redact`), else by resource (`orders` in `orders/create`); any other topic shows ids and
// timestamps only.
const SHOPIFY_TOPICS: ReadonlyMap<string, Fields> = new Map(
  Object.entries({
    orders: [
      '/id',
      '/order_number',
      '/financial_status',
      '/fulfillment_status',
      '/total_price',
      '/currency',
      '/customer/id',
      ...under('/line_items/*', ['/id', '/product_id', '/variant_id', '/quantity', '/price', '/sku']),
      '/subtotal_price',
      '/total_tax',
      '/total_discounts',
      '/presentment_currency',
      '/cancelled_at',
      '/cancel_reason',
      '/closed_at',
      '/test',
      '/confirmed',
      '/source_name',
      '/admin_graphql_api_id',
      '/created_at',
      '/processed_at',
      '/updated_at',
    ],
    // The payload is the shop: its owner's name, email and address are left out.
    'app/uninstalled': ['/id', '/myshopify_domain', '/plan_name', '/created_at', '/updated_at'],
    'customers/data_request': [
      '/shop_id',
      '/shop_domain',
      '/customer/id',
      '/orders_requested/*',
      '/data_request/id',
    ],
    'customers/redact': ['/shop_id', '/shop_domain', '/customer/id', '/orders_to_redact/*'],
    'shop/redact': ['/shop_id', '/shop_domain'],
  }).map(([topic, pointers]) => [topic, tree(pointers)]),
);

// Standard Webhooks senders: the envelope, and the conventional names of what `data` is about.
const STANDARD_WEBHOOK = tree([
  '/type',
  '/timestamp',
  '/data/id',
  '/data/object',
  '/data/type',
  '/data/status',
]);

// Each catalogue provider's fields, as its definition lists them, by catalogue type.
const CATALOGUE: ReadonlyMap<string, Fields> = new Map(
  Object.entries(EXCERPT_POINTERS).map(([type, pointers]) => [type, fieldsOf(pointers)]),
);

/** The fields an excerpt of this provider's event of this type may show. */
export function fieldsFor(provider: string, type: string): Fields {
  if (provider === 'stripe') {
    const object = type.slice(0, Math.max(0, type.lastIndexOf('.')));
    return STRIPE_BY_OBJECT.get(object) ?? STRIPE_ANY;
  }
  if (provider === 'shopify') {
    return SHOPIFY_TOPICS.get(type) ?? SHOPIFY_TOPICS.get(type.split('/')[0] ?? '') ?? SHOPIFY_RESOURCE;
  }
  // A catalogue provider's own list (by its type, the source's default name); any other name is a Standard
  // Webhooks sender, or a source whose fields nobody listed: the envelope only.
  return CATALOGUE.get(provider) ?? STANDARD_WEBHOOK;
}
