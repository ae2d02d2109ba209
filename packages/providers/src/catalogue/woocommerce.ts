import type { Provider } from '../types.ts';
import { bodyHmacProvider, signBodyHmac, type BodyHmacScheme } from './body-hmac.ts';
import type { ProviderFacts } from './facts.ts';
import { requiredHeader, type CatalogueProviderOptions } from './signing.ts';
import type { CatalogueDefinition } from './definition.ts';
export const WOOCOMMERCE_FACTS: ProviderFacts = {
  scheme: "X-WC-Webhook-Signature: <base64 HMAC-SHA256 of the raw body>, keyed with the webhook's secret",
  eventKey:
    'X-WC-Webhook-Source + X-WC-Webhook-ID + X-WC-Webhook-Delivery-ID (one per delivery; WooCommerce does not ' +
    'redeliver); refused as invalid_payload when absent',
  eventType: 'X-WC-Webhook-Topic (order.created, product.updated)',
  toleranceSeconds: undefined,
  retries:
    'none: a failed delivery is counted, and the webhook is disabled after 5 consecutive failures; the ping ' +
    'sent when a webhook is saved (form body webhook_id=<id>, unsigned) must be answered 2xx as a handshake',
  quirks:
    'the ping on saving a webhook is form-encoded and unsigned: answer it as a handshake; no redelivery',
  requiredOptions: [],
  docs: 'https://woocommerce.com/document/webhooks/',
};

const WOOCOMMERCE: BodyHmacScheme = {
  type: 'woocommerce',
  signature: {
    header: 'x-wc-webhook-signature',
    prefix: '',
    digest: 'sha256',
    encoding: 'base64',
    sender: 'WooCommerce',
  },
  kept: ['x-wc-webhook-source', 'x-wc-webhook-topic', 'x-wc-webhook-resource', 'x-wc-webhook-event'],
  identify(name, request) {
    const source = requiredHeader(name, request, 'x-wc-webhook-source', 'it is part of the event key');
    const webhook = requiredHeader(name, request, 'x-wc-webhook-id', 'it is part of the event key');
    const delivery = requiredHeader(name, request, 'x-wc-webhook-delivery-id', 'it is part of the event key');
    return {
      eventId: `${source}:${webhook}:${delivery}`,
      type: requiredHeader(name, request, 'x-wc-webhook-topic', 'it is the event type'),
    };
  },
};

/**
 * WooCommerce: `X-WC-Webhook-Signature` is the base64 HMAC-SHA256 of the raw body keyed with the webhook's secret.
 * Nothing else is signed. The ping WooCommerce sends when a webhook is saved (`webhook_id=<id>`, form-encoded,
 * without a signature) is refused here as `missing_signature`: it is a handshake for the sources layer to answer.
 *
 * Event key: `<X-WC-Webhook-Source>:<X-WC-Webhook-ID>:<X-WC-Webhook-Delivery-ID>`, so two stores (or two webhooks
 * of one store) never collide. Type: `X-WC-Webhook-Topic`, e.g. `order.created`.
 *
 * @example
 * const woocommerce = wooCommerceProvider({ secrets: [process.env.WOOCOMMERCE_WEBHOOK_SECRET] });
 */
export function wooCommerceProvider(options: CatalogueProviderOptions): Provider {
  return bodyHmacProvider(WOOCOMMERCE, options);
}

/** The `X-WC-Webhook-Signature` header value WooCommerce would send for this body, for tests and the dev CLI. */
export function signWooCommerce({
  payload,
  secret,
}: {
  payload: string | Uint8Array;
  secret: string;
}): string {
  return signBodyHmac(WOOCOMMERCE, payload, secret);
}

/** The catalogue's woocommerce: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'woocommerce',
  facts: WOOCOMMERCE_FACTS,
  create: wooCommerceProvider,
  eventFacts: [{ label: 'Store', header: 'x-wc-webhook-source' }],
  subject: ['/id', '/customer_id', '/billing/email'],
  excerpt: ['/id', '/status', '/currency', '/total', '/date_created'],
};
