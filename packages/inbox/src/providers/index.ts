export {
  createProviders,
  parseStandardWebhooksEnv,
  type ProvidersConfig,
  type StandardWebhooksSender,
} from './registry.ts';
export { checkEventLimits, MAX_EVENT_FIELD_LENGTH } from './shared.ts';
export {
  SHOPIFY_KEPT_HEADERS,
  shopifyProvider,
  signShopify,
  type ShopifyProviderOptions,
  type SignShopifyOptions,
} from './shopify.ts';
export {
  PROVIDER_NAME,
  signStandardWebhook,
  standardWebhooksProvider,
  type SignStandardWebhookOptions,
  type StandardWebhooksProviderOptions,
} from './standard-webhooks.ts';
export { signStripe, stripeProvider, type SignStripeOptions, type StripeProviderOptions } from './stripe.ts';
export type { Provider, SignedRequest, VerifiedEvent } from './types.ts';
