import type { StripePayloads } from '@webhook-inbox/providers/stripe';
import type { SampleBodies, Shape } from './shape.ts';

// Stripe's sample events, one per event type, in the shape of the `stripe` package's `Stripe.Event` union (what
// `@webhook-inbox/inbox/stripe` types `event.payload` by), at the API version of the `stripe` the workspace
// type-checks with. `satisfies` holds each to its type. `webhook-inbox send stripe <type>` posts them with fresh
// ids (the CLI's samples.ts); the example worker's effects read their customer, email, subscription, status,
// price and period end.

const CREATED = 1_764_925_200; // 2026-12-05T09:00:00Z
const PERIOD_END = CREATED + 30 * 24 * 3600;
const API_VERSION = '2026-10-28.endive';
const CUSTOMER = 'cus_TZmrKUwzJgpN8v';
const SUBSCRIPTION_ID = 'sub_1SCkvN2eZvKYlo2CVQG7Hx0b';

type Subscription = StripePayloads['customer.subscription.created']['data']['object'];

// The parts written once are held to their types where they are written: a spread or a call's result in the
// bodies below is not checked for fields its type lacks.
const ENVELOPE = {
  object: 'event',
  api_version: API_VERSION,
  created: CREATED,
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
} as const satisfies Shape<StripePayloads['customer.subscription.created']>;

const PRICE = {
  id: 'price_1SCkuT2eZvKYlo2CrIOAgYyw',
  object: 'price',
  active: true,
  billing_scheme: 'per_unit',
  created: CREATED,
  currency: 'usd',
  livemode: false,
  lookup_key: null,
  metadata: {},
  nickname: 'Pro monthly',
  product: 'prod_TZmqzZ0sMfvX1H',
  recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
  tax_behavior: 'exclusive',
  tiers_mode: null,
  transform_quantity: null,
  type: 'recurring',
  unit_amount: 2000,
  unit_amount_decimal: '2000',
} as const satisfies Shape<Subscription['items']['data'][number]['price']>;

function subscription(status: 'active' | 'canceled', canceledAt: number | null) {
  return {
    id: SUBSCRIPTION_ID,
    object: 'subscription',
    billing_cycle_anchor: CREATED,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: canceledAt,
    collection_method: 'charge_automatically',
    created: CREATED,
    currency: 'usd',
    customer: CUSTOMER,
    default_payment_method: 'pm_1SCkvL2eZvKYlo2CvyAuK6e1',
    ended_at: canceledAt,
    items: {
      object: 'list',
      data: [
        {
          id: 'si_TZms2T6zYbqgXj',
          object: 'subscription_item',
          created: CREATED,
          current_period_start: CREATED,
          current_period_end: PERIOD_END,
          metadata: {},
          price: PRICE,
          quantity: 1,
          subscription: SUBSCRIPTION_ID,
          tax_rates: [],
        },
      ],
      has_more: false,
      url: `/v1/subscription_items?subscription=${SUBSCRIPTION_ID}`,
    },
    latest_invoice: 'in_1SCkvN2eZvKYlo2CwV3bKd9N',
    livemode: false,
    metadata: {},
    start_date: CREATED,
    status,
    trial_end: null,
    trial_start: null,
  } as const satisfies Shape<Subscription>;
}

/** The sample event of each Stripe type `send` knows, by its type. */
export const STRIPE_SAMPLE_BODIES = {
  'checkout.session.completed': {
    ...ENVELOPE,
    id: 'evt_1SCkvO2eZvKYlo2CrZ3sO4vG',
    type: 'checkout.session.completed',
    data: {
      object: {
        id: 'cs_test_a1YS1URlnyQCN5fUUduORoQ7Pw41PJqDWkIVQCpJPqkfIhd6tE7q6CZKuS',
        object: 'checkout.session',
        amount_subtotal: 2000,
        amount_total: 2000,
        cancel_url: 'https://example.com/cancel',
        client_reference_id: null,
        created: CREATED,
        currency: 'usd',
        customer: CUSTOMER,
        customer_details: {
          email: 'dev@example.com',
          name: 'Dev Customer',
          phone: null,
          tax_exempt: 'none',
          tax_ids: [],
        },
        customer_email: 'dev@example.com',
        expires_at: CREATED + 24 * 3600,
        invoice: null,
        livemode: false,
        metadata: {},
        mode: 'payment',
        payment_intent: 'pi_3SCkvN2eZvKYlo2C0Kx6LS2p',
        payment_method_types: ['card'],
        payment_status: 'paid',
        status: 'complete',
        subscription: null,
        success_url: 'https://example.com/success',
        url: null,
      },
    },
  },
  'customer.subscription.created': {
    ...ENVELOPE,
    id: 'evt_1SCkvP2eZvKYlo2CWfR7n0Vt',
    type: 'customer.subscription.created',
    data: { object: subscription('active', null) },
  },
  'customer.subscription.updated': {
    ...ENVELOPE,
    id: 'evt_1SCkvQ2eZvKYlo2CY0Nw5kPa',
    type: 'customer.subscription.updated',
    data: { object: subscription('active', null), previous_attributes: { metadata: {} } },
  },
  'customer.subscription.deleted': {
    ...ENVELOPE,
    id: 'evt_1SCkvR2eZvKYlo2C2bSmiwqE',
    type: 'customer.subscription.deleted',
    data: { object: subscription('canceled', PERIOD_END) },
  },
} satisfies SampleBodies<
  StripePayloads,
  | 'checkout.session.completed'
  | 'customer.subscription.created'
  | 'customer.subscription.updated'
  | 'customer.subscription.deleted'
>;

/** A Stripe event type with a sample event. */
export type StripeSampleType = keyof typeof STRIPE_SAMPLE_BODIES;

export function isStripeSampleType(type: string): type is StripeSampleType {
  return Object.hasOwn(STRIPE_SAMPLE_BODIES, type);
}
