import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
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

/** The catalogue's woocommerce: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'woocommerce',
  facts: WOOCOMMERCE_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-WC-Webhook-Signature', algorithm: 'sha256', encoding: 'base64', padding: 'canonical' },
    eventKey: {
      header: ['X-WC-Webhook-Source', 'X-WC-Webhook-ID', 'X-WC-Webhook-Delivery-ID'],
      unsigned: true,
    },
    eventType: { header: 'X-WC-Webhook-Topic', required: true },
    keepHeaders: ['X-WC-Webhook-Source', 'X-WC-Webhook-Topic', 'X-WC-Webhook-Resource', 'X-WC-Webhook-Event'],
  },
  eventFacts: [{ label: 'Store', header: 'x-wc-webhook-source' }],
  subject: ['/id', '/customer_id', '/billing/email'],
  caseless: { subject: ['/billing/email'] },
  excerpt: ['/id', '/status', '/currency', '/total', '/date_created'],
} satisfies CatalogueDefinition;

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
  return templatedProvider('woocommerce', definition.template, options);
}

/** The `X-WC-Webhook-Signature` header value WooCommerce would send for this body, for tests and the dev CLI. */
export const signWooCommerce = bodySigner('woocommerce', definition.template);
