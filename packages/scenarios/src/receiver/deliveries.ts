import { randomBytes, randomUUID } from 'node:crypto';
import { signShopify, signStripe } from '@webhook-inbox/providers';
import { fixtureText } from '@webhook-inbox/testing';

export const STRIPE_SECRET = 'whsec_test_receiver_primary';
export const STRIPE_OLD_SECRET = 'whsec_test_receiver_rotated_out';
export const SHOPIFY_SECRET = 'shpss_test_receiver_client_secret';
export const SW_SECRET = `whsec_${Buffer.from('standard-webhooks-test-key-32byte').toString('base64')}`;
export const SW_NAME = 'acme';

/** The receiver's environment for these secrets (plus whatever the test adds). */
export function receiverEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    STRIPE_WEBHOOK_SECRET: `${STRIPE_SECRET},${STRIPE_OLD_SECRET}`,
    SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
    STANDARD_WEBHOOKS: `${SW_NAME}=${SW_SECRET}`,
    // Any free port: several receivers run at once in the test run.
    MANAGEMENT_PORT: '0',
    ...extra,
  };
}

/** One signed HTTP delivery: where to send it, the exact bytes, the headers, and the key it should record. */
export interface Delivery {
  provider: string;
  path: string;
  body: string;
  headers: Record<string, string>;
  key: string;
}

/** What a test may choose of a signed delivery; the rest is made up (a fresh id, now, the test secret). */
export interface DeliveryOptions {
  id?: string;
  body?: string;
  secret?: string;
  timestamp?: number;
  /** The signature header's value, or `null` for none. */
  signature?: string | null;
}

export function stripeDelivery(options: DeliveryOptions = {}): Delivery {
  const id = options.id ?? `evt_${randomBytes(12).toString('hex')}`;
  const body =
    options.body ??
    JSON.stringify({ ...(JSON.parse(fixtureText('stripe/checkout.session.completed.json')) as object), id });
  const signature =
    options.signature === undefined
      ? signStripe({ payload: body, secret: options.secret ?? STRIPE_SECRET, timestamp: options.timestamp })
      : options.signature;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (signature !== null) headers['Stripe-Signature'] = signature;
  return { provider: 'stripe', path: '/webhooks/stripe', body, headers, key: id };
}

/** A signed Stripe event of any `type`, minimal (`{id, object, type, data: {object: {id}}}`), with a fresh id. */
export function stripeEventOf(type: string): Delivery {
  const id = `evt_${randomBytes(12).toString('hex')}`;
  const body = JSON.stringify({ id, object: 'event', type, data: { object: { id: `obj_${id}` } } });
  return stripeDelivery({ id, body });
}

export function shopifyDelivery(
  options: {
    eventId?: string;
    body?: string;
    secret?: string;
    signature?: string | null;
    omit?: string[];
  } = {},
): Delivery {
  const eventId = options.eventId ?? randomUUID();
  const body = options.body ?? fixtureText('shopify/orders_create.json');
  const signature =
    options.signature === undefined
      ? signShopify({ payload: body, secret: options.secret ?? SHOPIFY_SECRET })
      : options.signature;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'X-Shopify-Topic': 'orders/create',
    'X-Shopify-Shop-Domain': 'dev-shop.myshopify.com',
    'X-Shopify-Event-Id': eventId,
    'X-Shopify-Webhook-Id': randomUUID(),
    'X-Shopify-Triggered-At': new Date().toISOString(),
  };
  if (signature !== null) headers['X-Shopify-Hmac-Sha256'] = signature;
  for (const name of options.omit ?? []) delete headers[name];
  return {
    provider: 'shopify',
    path: '/webhooks/shopify',
    body,
    headers,
    key: `dev-shop.myshopify.com:orders/create:${eventId}`,
  };
}
