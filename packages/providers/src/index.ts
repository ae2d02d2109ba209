/**
 * Verification and signing of every provider the receiver knows: `verify(provider, request)` for any Node service,
 * the providers' factories and `sign*` functions (for senders and tests), the sources framework the receiver and
 * the CLI configure them with. The typed payloads are the subpaths `./github`, `./slack`, `./paddle`, `./square`;
 * the sample deliveries are `@webhook-inbox/samples`', a package of their own.
 */
export { verify, type Verification, type WebhookRequest } from './verify.ts';
export {
  CodedError,
  InvalidPayloadError,
  InvalidSignatureError,
  MissingSignatureError,
  TimestampOutOfToleranceError,
  WebhookError,
  type VerificationErrorCode,
  type WebhookErrorCode,
} from './errors.ts';
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
  shopifyShopDomain,
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
export { HANDSHAKES, type HandshakeType } from './handshakes.ts';
export type { TemplateSpec } from './template-schema.ts';
export {
  CATALOGUE,
  CERTIFICATE_SOURCE_TYPES,
  catalogueEntry,
  type CatalogueEntry,
  type CatalogueSample,
  type CatalogueProviderOptions,
  type CatalogueSourceOptions,
  type ProviderFacts,
  signAdyen,
  signBitbucket,
  signCalendly,
  signClerk,
  signCustomerio,
  signDiscord,
  signGithub,
  signGitlab,
  signHubspot,
  signIntercom,
  signJira,
  signLinear,
  signMailgun,
  signMeta,
  signPaddle,
  signPaypal,
  signPostmark,
  signResend,
  signSegment,
  signSendgrid,
  signSentry,
  signSlack,
  signSns,
  signSquare,
  signTwilio,
  signTypeform,
  signVercel,
  signWooCommerce,
  signZendesk,
  signZoom,
  adyenProvider,
  awsSnsProvider,
  bitbucketProvider,
  calendlyProvider,
  clerkProvider,
  customerioProvider,
  discordProvider,
  githubProvider,
  gitlabProvider,
  hubspotProvider,
  intercomProvider,
  jiraProvider,
  linearProvider,
  mailgunProvider,
  metaProvider,
  paddleProvider,
  paypalProvider,
  postmarkProvider,
  resendProvider,
  segmentProvider,
  sendgridProvider,
  sentryProvider,
  slackProvider,
  squareProvider,
  twilioProvider,
  typeformProvider,
  vercelProvider,
  wooCommerceProvider,
  zendeskProvider,
  zoomProvider,
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
