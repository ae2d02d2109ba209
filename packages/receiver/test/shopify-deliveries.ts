import { randomUUID } from 'node:crypto';
import { signShopify } from '@webhook-inbox/providers';
import { fixtureText } from '@webhook-inbox/testing';
import { SHOPIFY_SECRET, type Delivery } from '@webhook-inbox/scenarios/receiver';

/** `body`, signed with the app's secret, under the given topic and shop headers, with a fresh event id. */
export function signedShopifyDelivery(
  topic: string,
  shop: string,
  body: string,
  secret: string = SHOPIFY_SECRET,
): Delivery {
  const eventId = randomUUID();
  return {
    provider: 'shopify',
    path: '/webhooks/shopify',
    body,
    headers: {
      'content-type': 'application/json',
      'X-Shopify-Hmac-Sha256': signShopify({ payload: body, secret }),
      'X-Shopify-Topic': topic,
      'X-Shopify-Shop-Domain': shop,
      'X-Shopify-Event-Id': eventId,
      'X-Shopify-Webhook-Id': randomUUID(),
      'X-Shopify-Triggered-At': new Date().toISOString(),
    },
    key: `${shop}:${topic}:${eventId}`,
  };
}

const forShop = (name: string, shop: string) =>
  fixtureText(`shopify/${name}`).replaceAll('{shop}.myshopify.com', shop);

/**
 * Shopify's sample payloads, naming `shop` as a real delivery does: the compliance samples say
 * `{shop}.myshopify.com`, and the app/uninstalled sample (a Shop object) has `myshopify_domain: null`.
 */
export const shopifySamples = {
  /** The orders/create sample, with its own order and customer ids when given (ids beyond 2^53 edited as text). */
  order: (ids: { order?: string; customer?: string } = {}): string => {
    let text = fixtureText('shopify/orders_create.json');
    if (ids.order !== undefined) {
      text = text
        .replace(/^\{"id":\d+/, `{"id":${ids.order}`)
        .replace(/"gid:\/\/shopify\/Order\/\d+"/, `"gid://shopify/Order/${ids.order}"`);
    }
    if (ids.customer !== undefined)
      text = text.replace(/"customer":\{"id":\d+/, `"customer":{"id":${ids.customer}`);
    return text;
  },
  shopRedact: (shop: string) => forShop('shop_redact.json', shop),
  customersRedact: (shop: string) => forShop('customers_redact.json', shop),
  dataRequest: (shop: string) => forShop('customers_data_request.json', shop),
  uninstalled: (shop: string) =>
    fixtureText('shopify/app_uninstalled.json').replace(
      '"myshopify_domain": null',
      `"myshopify_domain": "${shop}"`,
    ),
};
