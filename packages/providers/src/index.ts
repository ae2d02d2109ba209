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
export type { HttpAnswer, Provider, Reception, SignedRequest, VerifiedEvent } from './types.ts';
export { apiKeyProvider, signApiKey, type ApiKeySpec } from './api-key.ts';
export { basicAuthProvider, signBasicAuth } from './basic-auth.ts';
export { ed25519Provider, signEd25519, type Ed25519Spec } from './ed25519.ts';
export { hmacProvider, signHmac, type HmacSpec } from './hmac.ts';
export {
  createSourceProvider,
  sourceSpec,
  sourcesFileSpec,
  isBuiltinSource,
  SOURCE_TYPES,
  type SourceDefinition,
} from './sources.ts';
export { loadSourcesFile, parseSourcesFile, SourcesFileError } from './sources-file.ts';
export type { TemplateSpec } from './template-spec.ts';
export {
  CATALOGUE,
  CERTIFICATE_SOURCE_TYPES,
  catalogueEntry,
  type CatalogueEntry,
} from './catalogue/index.ts';
export {
  CertificateError,
  createCertificateStore,
  PAYPAL_CERTIFICATE_HOSTS,
  SNS_CERTIFICATE_HOSTS,
  type CertificateErrorCode,
  type CertificateFetch,
  type CertificateStore,
} from './catalogue/certificates.ts';
export {
  catalogueDelivery,
  catalogueSampleType,
  CATALOGUE_TYPES_WITHOUT_SAMPLES,
  SAMPLE_CERTIFICATE_URLS,
  sampleCredentials,
  selfSignedCertificate,
  type CatalogueDelivery,
  type DeliveryInput,
  type SampleCredentials,
} from './deliveries/index.ts';
