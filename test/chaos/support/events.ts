/**
 * A mixed load of realistic events (the project's fixtures with fresh ids), each both as a signed HTTP delivery
 * (for the receivers) and as the raw event the receiver records (for loading the queue directly), with the
 * database effects it must cause exactly once.
 */
import { randomBytes } from 'node:crypto';
import type { EffectCounts } from './invariants.ts';
import { shopifyDelivery, stripeDelivery, type Delivery } from '@webhook-inbox/scenarios/receiver';
import {
  checkoutEvent,
  shopifyEvent,
  subscriptionEvent,
  type RawEvent,
} from '@webhook-inbox/scenarios/worker';
import { fixtureText } from '@webhook-inbox/testing';

export interface ChaosEvent {
  delivery: Delivery;
  raw: RawEvent;
  /** Database effects this event must cause, once. */
  effects: EffectCounts;
  /** The account whose welcome email this event may send (one email per account, whatever the events). */
  customer?: string;
}

/** The shop the receiver tests' Shopify deliveries come from. */
export const SHOP = 'dev-shop.myshopify.com';

const ORDER_TEXT = fixtureText('shopify/orders_create.json');
const T0 = 1_700_000_000;

/** A Stripe checkout for `customer` (a welcome email per new customer), with a subscription when asked. */
export function checkout(run: string, i: number, customer: string, withSubscription: boolean): ChaosEvent {
  const raw = checkoutEvent({
    id: `evt_${run}_co_${i}`,
    customer,
    email: `${customer}@example.test`,
    subscription: withSubscription ? `sub_${run}_co_${i}` : null,
    created: T0 + i,
  });
  return {
    raw,
    delivery: stripeDelivery({ id: raw.eventId, body: raw.payloadText }),
    effects: { accounts: 1, subscriptions: withSubscription ? 1 : 0 },
    customer,
  };
}

/** A subscription update of its own subscription. */
export function subscriptionUpdate(run: string, i: number): ChaosEvent {
  const raw = subscriptionEvent('customer.subscription.updated', {
    id: `evt_${run}_su_${i}`,
    subscription: `sub_${run}_su_${i}`,
    customer: `cus_${run}_su_${i}`,
    created: T0 + i,
    status: 'active',
  });
  return {
    raw,
    delivery: stripeDelivery({ id: raw.eventId, body: raw.payloadText }),
    effects: { subscriptions: 1 },
  };
}

/** A Shopify orders/create with its own order id (ids above 2^53, as Shopify's are). */
export function order(run: string, i: number): ChaosEvent {
  const orderId = (9_007_199_254_740_993n + BigInt(i)).toString();
  const body = ORDER_TEXT.replace(/^\{"id":\d+/, `{"id":${orderId}`);
  if (body === ORDER_TEXT) throw new Error('the orders/create fixture no longer starts with its id');
  const eventId = `${run}-order-${i}`;
  const delivery = shopifyDelivery({ eventId, body });
  return {
    raw: shopifyEvent('orders/create', body, { shop: SHOP, eventId }),
    delivery,
    effects: { shopify_orders: 1 },
  };
}

/**
 * The `i`-th event of a mixed load, a rotation of: checkout (every 4th with a subscription), checkout,
 * subscription update, Shopify order. The two checkouts of a rotation share a customer; with `customers`, the
 * customers repeat after that many (so some check out more than twice: still one welcome email each).
 */
export function mixedEvent(run: string, i: number, customers = Infinity): ChaosEvent {
  switch (i % 4) {
    case 0:
    case 1:
      return checkout(run, i, `cus_${run}_${(i >> 1) % customers}`, i % 8 === 0);
    case 2:
      return subscriptionUpdate(run, i);
    default:
      return order(run, i);
  }
}

/** `count` mixed events, to `count / 3` customers by default. */
export function mixedEvents(count: number, options: { run?: string; customers?: number } = {}): ChaosEvent[] {
  const run = options.run ?? randomBytes(4).toString('hex');
  const customers = options.customers ?? Math.max(1, Math.floor(count / 3));
  return Array.from({ length: count }, (_, i) => mixedEvent(run, i, customers));
}

/** Mixed events without end (a customer per rotation), for loads that run until the scenario says stop. */
export function mixedEventSource(run = randomBytes(4).toString('hex')): (i: number) => ChaosEvent {
  return (i) => mixedEvent(run, i);
}

/** Distinct accounts among the events: the welcome emails expected. */
export function accountsOf(events: readonly ChaosEvent[]): number {
  return new Set(events.flatMap((event) => (event.customer ? [event.customer] : []))).size;
}

/** `{ provider, key }` of each event, for `missingKeys`. */
export function keysOf(events: ReadonlyArray<Pick<ChaosEvent, 'delivery'>>) {
  return events.map(({ delivery }) => ({ provider: delivery.provider, key: delivery.key }));
}
