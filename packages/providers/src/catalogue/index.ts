import type { Provider } from '../types.ts';
import { definition as adyen } from './adyen.ts';
import { definition as awsSns } from './aws-sns.ts';
import { definition as bitbucket } from './bitbucket.ts';
import { definition as calendly } from './calendly.ts';
import { definition as clerk } from './clerk.ts';
import { definition as customerio } from './customerio.ts';
import { definition as discord } from './discord.ts';
import { definition as github } from './github.ts';
import { definition as gitlab } from './gitlab.ts';
import { definition as hubspot } from './hubspot.ts';
import { definition as intercom } from './intercom.ts';
import { definition as jira } from './jira.ts';
import { definition as linear } from './linear.ts';
import { definition as mailgun } from './mailgun.ts';
import { definition as meta } from './meta.ts';
import { definition as paddle } from './paddle.ts';
import { definition as paypal } from './paypal.ts';
import { definition as postmark } from './postmark.ts';
import { definition as resend } from './resend.ts';
import { definition as segment } from './segment.ts';
import { definition as sendgrid } from './sendgrid.ts';
import { definition as sentry } from './sentry.ts';
import { definition as slack } from './slack.ts';
import { definition as square } from './square.ts';
import { definition as twilio } from './twilio.ts';
import { definition as typeform } from './typeform.ts';
import { definition as vercel } from './vercel.ts';
import { definition as woocommerce } from './woocommerce.ts';
import { definition as zendesk } from './zendesk.ts';
import { definition as zoom } from './zoom.ts';
import type { CatalogueDefinition, CatalogueSourceOptions } from './definition.ts';
import type { ProviderFacts } from './facts.ts';
import { withSourceType } from './source-type.ts';
import { templatedProvider } from './template-data.ts';

/** One catalogue provider, as the sources framework registers it. */
export interface CatalogueEntry {
  /** The source type (`github`), also the default source name and URL segment. */
  type: string;
  /**
   * The environment variable that declares a source of this type named after it: `<TYPE>_WEBHOOK_SECRET`, a `-` in
   * the type as `_` (`AWS_SNS_WEBHOOK_SECRET`).
   */
  envVar: string;
  /** The provider for one source; throws TypeError or RangeError on bad options, at start-up. */
  create(options: CatalogueSourceOptions): Provider;
  facts: ProviderFacts;
  /**
   * The sources-file source, without its secrets, that verifies this provider, where the template engine expresses
   * its scheme (the body-HMAC and Svix providers): what a user would write for it.
   */
  template?: CatalogueDefinition['template'];
}

/**
 * Every catalogue provider's module, once, in the docs' order. Stripe, Shopify and Standard Webhooks are registered
 * by ../registry.ts and are not repeated here.
 */
export const DEFINITIONS: readonly CatalogueDefinition[] = [
  github,
  gitlab,
  bitbucket,
  jira,
  linear,
  paddle,
  square,
  hubspot,
  intercom,
  zendesk,
  postmark,
  mailgun,
  resend,
  clerk,
  sentry,
  vercel,
  typeform,
  calendly,
  woocommerce,
  segment,
  customerio,
  sendgrid,
  discord,
  slack,
  twilio,
  zoom,
  adyen,
  meta,
  awsSns,
  paypal,
];

function entry(definition: CatalogueDefinition): CatalogueEntry {
  const { type, facts, template } = definition;
  const create = template
    ? (options: CatalogueSourceOptions) => templatedProvider(type, template, options)
    : definition.create;
  return {
    type,
    envVar: `${type.toUpperCase().replaceAll('-', '_')}_WEBHOOK_SECRET`,
    create: (options) => withSourceType(type, create(options)),
    facts,
    ...(template && { template }),
  };
}

/** Every catalogue provider, by type. */
export const CATALOGUE: readonly CatalogueEntry[] = DEFINITIONS.map(entry);

/** The catalogue types whose signing certificate is fetched from a URL in the message (certificates.ts). */
export const CERTIFICATE_SOURCE_TYPES: readonly string[] = DEFINITIONS.filter(
  (definition) => definition.certificateHosts !== undefined,
).map((definition) => definition.type);

/** The catalogue entry of a source type, or `undefined`. */
export function catalogueEntry(type: string): CatalogueEntry | undefined {
  return CATALOGUE.find((candidate) => candidate.type === type);
}

export type { BatchProvider } from './batch.ts';
export { discordPublicKey, verifyDiscordSignature } from './discord.ts';
export { sendgridPublicKey, verifySendgridSignature } from './sendgrid.ts';
export type { ProviderFacts } from './facts.ts';
export type { CatalogueProviderOptions } from './signing.ts';
export type { CatalogueDefinition, CatalogueSourceOptions } from './definition.ts';
export { snsStringToSign } from './aws-sns.ts';
export { paypalSignedText } from './paypal.ts';
export { adyenProvider, signAdyen } from './adyen.ts';
export { awsSnsProvider, signSns } from './aws-sns.ts';
export { bitbucketProvider, signBitbucket } from './bitbucket.ts';
export { calendlyProvider, signCalendly } from './calendly.ts';
export { clerkProvider, signClerk } from './clerk.ts';
export { customerioProvider, signCustomerio } from './customerio.ts';
export { DISCORD_FACTS, discordProvider, signDiscord } from './discord.ts';
export { githubProvider, signGithub } from './github.ts';
export { gitlabProvider, signGitlab } from './gitlab.ts';
export { hubspotProvider, signHubspot } from './hubspot.ts';
export { intercomProvider, signIntercom } from './intercom.ts';
export { jiraProvider, signJira } from './jira.ts';
export { linearProvider, signLinear } from './linear.ts';
export { mailgunProvider, signMailgun } from './mailgun.ts';
export { metaProvider, signMeta } from './meta.ts';
export { paddleProvider, signPaddle } from './paddle.ts';
export { paypalProvider, signPaypal } from './paypal.ts';
export { postmarkProvider, signPostmark } from './postmark.ts';
export { resendProvider, signResend } from './resend.ts';
export { segmentProvider, signSegment } from './segment.ts';
export { sendgridProvider, signSendgrid } from './sendgrid.ts';
export { sentryProvider, signSentry } from './sentry.ts';
export { signSlack, slackProvider } from './slack.ts';
export { signSquare, squareProvider } from './square.ts';
export { signTwilio, twilioProvider } from './twilio.ts';
export { signTypeform, typeformProvider } from './typeform.ts';
export { signVercel, vercelProvider } from './vercel.ts';
export { signWooCommerce, wooCommerceProvider } from './woocommerce.ts';
export { signZendesk, zendeskProvider } from './zendesk.ts';
export { signZoom, zoomProvider } from './zoom.ts';
