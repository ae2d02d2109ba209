export * from './errors.ts';
export { ingest, type IngestDeps, type IngestOutcome } from './ingest.ts';
export { parseJsonLossless } from './json.ts';
export type { Provider, SignedRequest, VerifiedEvent } from './providers/types.ts';
export {
  DEAD_LETTER_QUEUE,
  DEFAULT_QUEUE_SETTINGS,
  EVENTS_QUEUE,
  ensureQueues,
  type EventJob,
  type QueueSettings,
} from './queue.ts';
export {
  createProviders,
  parseStandardWebhooksEnv,
  PROVIDER_NAME,
  SHOPIFY_KEPT_HEADERS,
  shopifyProvider,
  signShopify,
  signStandardWebhook,
  signStripe,
  standardWebhooksProvider,
  stripeProvider,
  type ProvidersConfig,
  type ShopifyProviderOptions,
  type SignShopifyOptions,
  type SignStandardWebhookOptions,
  type SignStripeOptions,
  type StandardWebhooksProviderOptions,
  type StandardWebhooksSender,
  type StripeProviderOptions,
} from './providers/index.ts';
export {
  getEvent,
  InvalidFilterError,
  isEventStatus,
  listEvents,
  type EffectRunRow,
  type EventDetail,
  type EventFilters,
  type EventPage,
  type EventSummary,
} from './event-store.ts';
