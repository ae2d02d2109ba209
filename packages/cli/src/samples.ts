import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isStripeSampleType, STRIPE_SAMPLE_BODIES } from '@webhook-inbox/samples';
import { UsageError } from './errors.ts';

/**
 * Realistic sample events for `inbox send` with fresh ids, so each send is a new event unless told otherwise:
 * Stripe's from `@webhook-inbox/samples` (typed by the `stripe` package's events), Shopify's from real payloads
 * (samples/*.json, copied from Shopify's own test payloads).
 */

const sample = (name: string) => readFileSync(new URL(`../samples/${name}.json`, import.meta.url), 'utf8');
const token = (length = 14) =>
  randomBytes(length).toString('base64url').replace(/[-_]/g, 'x').slice(0, length);

export interface StripeSampleOptions {
  eventId?: string;
  customer?: string;
  email?: string;
  subscription?: string;
  /** Unix seconds for the event's `created`. */
  created?: number;
}

type Json = Record<string, unknown>;

export function stripeSample(type: string, options: StripeSampleOptions = {}): string {
  if (!isStripeSampleType(type)) {
    throw new UsageError(
      `no Stripe sample for "${type}" (samples: ${Object.keys(STRIPE_SAMPLE_BODIES).join(', ')}); send your own with --payload <file.json>`,
    );
  }
  const event = structuredClone(STRIPE_SAMPLE_BODIES[type]) as unknown as Json & { data: { object: Json } };
  const customer = options.customer ?? `cus_${token()}`;
  const created = options.created ?? Math.floor(Date.now() / 1000);
  event.id = options.eventId ?? `evt_${token(24)}`;
  event.created = created;
  event.livemode = false;
  const object = event.data.object;
  object.customer = customer;
  if (type === 'checkout.session.completed') {
    const email = options.email ?? `dev+${customer.slice(4, 10).toLowerCase()}@example.com`;
    object.id = `cs_test_${token(24)}`;
    object.customer_email = email;
    object.customer_details = { ...(object.customer_details as Json), email, name: 'Dev Customer' };
    object.subscription = options.subscription ?? null;
    object.mode = options.subscription ? 'subscription' : 'payment';
  } else {
    object.id = options.subscription ?? `sub_${token()}`;
  }
  return JSON.stringify(event);
}

export interface ShopifySampleOptions {
  eventId?: string;
  shop?: string;
}

export interface ShopifySample {
  body: string;
  topic: string;
  shop: string;
  eventId: string;
}

export const SHOPIFY_SAMPLE_TOPICS = [
  'orders/create',
  'app/uninstalled',
  'customers/data_request',
  'customers/redact',
  'shop/redact',
] as const;

export function shopifySample(topic: string, options: ShopifySampleOptions = {}): ShopifySample {
  const shop = options.shop ?? 'dev-shop.myshopify.com';
  const eventId = options.eventId ?? crypto.randomUUID();
  let body: string;
  switch (topic) {
    case 'orders/create': {
      // Order ids exceed 2^53: edit the digits as text, never through a JS number.
      const orderId = (820982911946154508n + BigInt(randomInt(1, 2 ** 40))).toString();
      body = sample('shopify.orders-create').replace(/^\{"id":\d+/, `{"id":${orderId}`);
      body = body.replace(
        /"admin_graphql_api_id":"gid:\/\/shopify\/Order\/\d+"/,
        `"admin_graphql_api_id":"gid://shopify/Order/${orderId}"`,
      );
      break;
    }
    case 'app/uninstalled':
      // Shopify's sample Shop object has `myshopify_domain: null`; a real one names its shop, which the receiver
      // requires to be the X-Shopify-Shop-Domain header.
      body = sample('shopify.app-uninstalled').replace(
        '"myshopify_domain": null',
        `"myshopify_domain": ${JSON.stringify(shop)}`,
      );
      break;
    case 'customers/data_request':
      body = sample('shopify.customers-data-request').replaceAll('{shop}.myshopify.com', shop);
      break;
    case 'customers/redact':
      body = JSON.stringify({
        shop_id: 954889,
        shop_domain: shop,
        customer: { id: 191167, email: 'john@example.com', phone: '555-625-1199' },
        orders_to_redact: [299938, 280263, 220458],
      });
      break;
    case 'shop/redact':
      body = JSON.stringify({ shop_id: 954889, shop_domain: shop });
      break;
    default:
      throw new UsageError(
        `no Shopify sample for "${topic}" (samples: ${SHOPIFY_SAMPLE_TOPICS.join(', ')}); send your own with --payload <file.json>`,
      );
  }
  return { body, topic, shop, eventId };
}
