import type { KeyObject } from 'node:crypto';
import { InvalidPayloadError, InvalidSignatureError, MissingSignatureError } from './errors.ts';
import {
  assertSecrets,
  bytesEqual,
  decodeBase64Sha256,
  decodeJsonBody,
  headerValue,
  hmacKey,
  hmacSha256,
  toBytes,
} from './shared.ts';
import { checkShopifyPayload } from './shopify-payloads.ts';
import type { Provider, SignedRequest, VerifiedEvent } from './types.ts';
import type { PayloadPaths } from './catalogue/facts.ts';

export interface ShopifyProviderOptions {
  /** The source's name, its URL segment and dedupe namespace; default `shopify`. */
  name?: string;
  /** The app's client secret(s); more than one during a rotation. Any may match. */
  secrets: readonly string[];
}

const PROVIDER = 'shopify';

/**
 * The delivery headers kept in `VerifiedEvent.headers`, under these (lower-case, `x-shopify-`) names whichever
 * header style the request used. The HMAC is never kept.
 */
export const SHOPIFY_KEPT_HEADERS = {
  topic: 'x-shopify-topic',
  shopDomain: 'x-shopify-shop-domain',
  eventId: 'x-shopify-event-id',
  webhookId: 'x-shopify-webhook-id',
  triggeredAt: 'x-shopify-triggered-at',
  apiVersion: 'x-shopify-api-version',
} as const;

/** Shopify sends `X-Shopify-<name>`; newer deliveries use the unprefixed `Shopify-<name>`. Either is accepted. */
function shopifyHeader(request: SignedRequest, name: string): string | undefined {
  return headerValue(request.header(`x-shopify-${name}`)) ?? headerValue(request.header(`shopify-${name}`));
}

/**
 * Shopify: `X-Shopify-Hmac-Sha256` (or `Shopify-Hmac-Sha256`) is the base64 HMAC-SHA256 of the raw body keyed
 * with the app's client secret. Shopify signs only the body: there is no signed timestamp, and the topic, shop
 * and id headers are not covered by the signature. So a known topic's body must be that topic's payload and name
 * the header's shop (`checkShopifyPayload`), else `invalid_payload`.
 *
 * Event key: `${shopDomain}:${topic}:${eventId}`, e.g. `shop.myshopify.com:orders/create:<event id>`, where
 * `eventId` is `X-Shopify-Event-Id`, or `X-Shopify-Webhook-Id` when the event id header is absent; values are
 * used as received. Neither a shop domain nor a topic contains `:`, so the key is unambiguous. Type: the topic.
 *
 * @example
 * const shopify = shopifyProvider({ secrets: [clientSecret] });
 * const event = shopify.verify({ rawBody, header: (name) => request.headers.get(name) }, new Date());
 */
export function shopifyProvider(options: ShopifyProviderOptions): Provider {
  assertSecrets(PROVIDER, options.secrets);
  const keys: readonly KeyObject[] = options.secrets.map((secret) => hmacKey(secret));
  const name = options.name ?? PROVIDER;

  return {
    name,
    verify(request: SignedRequest): VerifiedEvent {
      const header = shopifyHeader(request, 'hmac-sha256');
      if (header === undefined) {
        throw new MissingSignatureError(
          'shopify: the X-Shopify-Hmac-Sha256 header is absent; is this request really from Shopify?',
        );
      }
      const signature = decodeBase64Sha256(header);
      if (signature === undefined) {
        throw new InvalidSignatureError(
          'shopify: the X-Shopify-Hmac-Sha256 header is not a base64 SHA-256 HMAC (44 characters)',
        );
      }
      if (!keys.some((key) => bytesEqual(hmacSha256(key, '', request.rawBody), signature))) {
        throw new InvalidSignatureError(
          'shopify: the HMAC matched no configured secret; are you verifying the raw request body ' +
            "(not re-serialized JSON)? is SHOPIFY_WEBHOOK_SECRET the app's client secret?",
        );
      }

      const topic = shopifyHeader(request, 'topic');
      const shopDomain = shopifyHeader(request, 'shop-domain');
      const eventId = shopifyHeader(request, 'event-id');
      const webhookId = shopifyHeader(request, 'webhook-id');
      if (topic === undefined) {
        throw new InvalidPayloadError('shopify: the X-Shopify-Topic header is absent');
      }
      if (shopDomain === undefined) {
        throw new InvalidPayloadError('shopify: the X-Shopify-Shop-Domain header is absent');
      }
      const deliveryId = eventId ?? webhookId;
      if (deliveryId === undefined) {
        throw new InvalidPayloadError(
          'shopify: both X-Shopify-Event-Id and X-Shopify-Webhook-Id are absent; one is needed to deduplicate',
        );
      }

      const { text, object } = decodeJsonBody(PROVIDER, request.rawBody);
      checkShopifyPayload(topic, shopDomain, object);

      const headers: Record<string, string> = {
        [SHOPIFY_KEPT_HEADERS.topic]: topic,
        [SHOPIFY_KEPT_HEADERS.shopDomain]: shopDomain,
      };
      if (eventId !== undefined) headers[SHOPIFY_KEPT_HEADERS.eventId] = eventId;
      if (webhookId !== undefined) headers[SHOPIFY_KEPT_HEADERS.webhookId] = webhookId;
      const triggeredAt = shopifyHeader(request, 'triggered-at');
      if (triggeredAt !== undefined) headers[SHOPIFY_KEPT_HEADERS.triggeredAt] = triggeredAt;
      const apiVersion = shopifyHeader(request, 'api-version');
      if (apiVersion !== undefined) headers[SHOPIFY_KEPT_HEADERS.apiVersion] = apiVersion;

      return {
        provider: name,
        eventId: `${shopDomain}:${topic}:${deliveryId}`,
        type: topic,
        payloadText: text,
        headers,
        body: object,
      };
    },
  };
}

/**
 * The shop a Shopify event belongs to, read back from what `shopifyProvider` recorded: the kept
 * `x-shopify-shop-domain` header, else the first part of the event key (`shop:topic:id`; a shop domain contains
 * no `:`), for an event recorded without its headers.
 */
export function shopifyShopDomain(event: {
  eventId: string;
  headers: Readonly<Record<string, string>>;
}): string {
  return event.headers[SHOPIFY_KEPT_HEADERS.shopDomain] ?? event.eventId.split(':')[0] ?? '';
}

export interface SignShopifyOptions {
  /** The exact body that will be sent. */
  payload: string | Uint8Array;
  /** The app's client secret. */
  secret: string;
}

/**
 * The `X-Shopify-Hmac-Sha256` header value Shopify would send for this body, for tests and the dev CLI.
 *
 * @example
 * const headers = {
 *   'x-shopify-hmac-sha256': signShopify({ payload: body, secret }),
 *   'x-shopify-topic': 'orders/create',
 *   'x-shopify-shop-domain': 'dev-shop.myshopify.com',
 *   'x-shopify-event-id': crypto.randomUUID(),
 * };
 */
export function signShopify({ payload, secret }: SignShopifyOptions): string {
  return hmacSha256(hmacKey(secret), '', toBytes(payload)).toString('base64');
}

/**
 * Shopify's paths into a delivery (`PayloadPaths`): the shop comes from a header; the body is the resource itself
 * (an order, a customer, the shop), and its headers the shop and the bare event id (`subjectHeaders`).
 */
export const SHOPIFY_PATHS: PayloadPaths = {
  eventFacts: [{ label: 'Shop', header: 'x-shopify-shop-domain' }],
  subject: ['/id', '/email', '/contact_email', '/customer/id', '/customer/email', '/domain'],
  subjectHeaders: ['x-shopify-shop-domain', 'x-shopify-event-id', 'x-shopify-webhook-id'],
  caseless: { subject: ['/email', '/contact_email', '/customer/email', '/domain', 'x-shopify-shop-domain'] },
};
