import { randomBytes } from 'node:crypto';
import { DEFAULT_QUEUE_SETTINGS, type QueueSettings } from '@webhook-inbox/inbox';
import { startProducer as startInboxProducer } from '@webhook-inbox/inbox/testing';
import type pg from 'pg';
import { fixture } from '@webhook-inbox/testing';

export type { Producer } from '@webhook-inbox/inbox/testing';

export const randomId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

/** Retries fast enough for a test, through pg-boss's retry machinery; a crashed job is retried after 2 s. */
export const TEST_QUEUE: QueueSettings = {
  ...DEFAULT_QUEUE_SETTINGS,
  retryLimit: 20,
  retryDelay: 0,
  retryBackoff: false,
  expireInSeconds: 2,
};

/** The same settings as worker environment variables. */
export function queueEnv(settings: QueueSettings = TEST_QUEUE): Record<string, string> {
  return {
    WORKER_RETRY_LIMIT: String(settings.retryLimit),
    WORKER_RETRY_DELAY_SECONDS: String(settings.retryDelay),
    WORKER_RETRY_BACKOFF: String(settings.retryBackoff),
    WORKER_RETRY_DELAY_MAX_SECONDS: String(Math.max(settings.retryDelayMax, settings.retryDelay)),
    WORKER_JOB_TIMEOUT_SECONDS: String(settings.expireInSeconds),
    WORKER_HEARTBEAT_SECONDS: String(settings.heartbeatSeconds ?? 0),
  };
}

export interface RawEvent {
  provider: string;
  eventId: string;
  type: string;
  payloadText: string;
  headers?: Record<string, string>;
}

/** The inbox's test producer (`@webhook-inbox/inbox/testing`), with the test queue settings by default. */
export const startProducer = (pool: pg.Pool, url: string, settings = TEST_QUEUE) =>
  startInboxProducer(pool, url, settings);

interface CheckoutOptions {
  id?: string;
  customer?: string | null;
  email?: string;
  name?: string;
  subscription?: string | null;
  created?: number;
}

/** The checkout.session.completed fixture with its ids replaced. */
export function checkoutEvent(options: CheckoutOptions = {}): RawEvent {
  const event = fixture<{ id: string; created: number; data: { object: Record<string, unknown> } }>(
    'stripe/checkout.session.completed.json',
  );
  const id = options.id ?? randomId('evt');
  const session = event.data.object;
  event.id = id;
  event.created = options.created ?? event.created;
  session.id = randomId('cs_test');
  if (options.customer !== undefined) session.customer = options.customer;
  if (options.subscription !== undefined) {
    session.subscription = options.subscription;
    session.mode = options.subscription ? 'subscription' : 'payment';
  }
  const details = session.customer_details as Record<string, unknown>;
  if (options.email !== undefined) details.email = options.email;
  if (options.name !== undefined) details.name = options.name;
  return {
    provider: 'stripe',
    eventId: id,
    type: 'checkout.session.completed',
    payloadText: JSON.stringify(event),
  };
}

type SubscriptionType =
  'customer.subscription.created' | 'customer.subscription.updated' | 'customer.subscription.deleted';

/** A subscription fixture event of `type`, for `subscription`, created at `created`. */
export function subscriptionEvent(
  type: SubscriptionType,
  options: { id?: string; subscription: string; customer?: string; created: number; status?: string },
): RawEvent {
  const event = fixture<{ id: string; created: number; data: { object: Record<string, unknown> } }>(
    `stripe/${type}.json`,
  );
  const id = options.id ?? randomId('evt');
  event.id = id;
  event.created = options.created;
  event.data.object.id = options.subscription;
  if (options.customer) event.data.object.customer = options.customer;
  if (options.status) event.data.object.status = options.status;
  return { provider: 'stripe', eventId: id, type, payloadText: JSON.stringify(event) };
}

/** A Shopify delivery as the receiver records it: key `shop:topic:id`, the kept headers, the body's exact text. */
export function shopifyEvent(
  topic: string,
  payloadText: string,
  options: { shop?: string; eventId?: string; triggeredAt?: string } = {},
): RawEvent {
  const shop = options.shop ?? 'test-shop.myshopify.com';
  const deliveryId = options.eventId ?? randomId('shopify');
  const headers: Record<string, string> = { 'x-shopify-topic': topic, 'x-shopify-shop-domain': shop };
  if (options.triggeredAt) headers['x-shopify-triggered-at'] = options.triggeredAt;
  return {
    provider: 'shopify',
    eventId: `${shop}:${topic}:${deliveryId}`,
    type: topic,
    payloadText,
    headers,
  };
}
