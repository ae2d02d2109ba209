import type { Provider } from '../types.ts';
import { withSourceType } from './source-type.ts';
import { ADYEN_FACTS, adyenProvider, signAdyen } from './adyen.ts';
import { AWS_SNS_FACTS, awsSnsProvider, signSns } from './aws-sns.ts';
import type { CertificateFetch } from './certificates.ts';
import { BITBUCKET_FACTS, bitbucketProvider, signBitbucket } from './bitbucket.ts';
import { CALENDLY_FACTS, calendlyProvider, signCalendly } from './calendly.ts';
import { CLERK_FACTS, clerkProvider, signClerk } from './clerk.ts';
import { DISCORD_FACTS, discordProvider, signDiscord } from './discord.ts';
import type { ProviderFacts } from './facts.ts';
import { GITHUB_FACTS, githubProvider, signGithub } from './github.ts';
import { GITLAB_FACTS, gitlabProvider, signGitlab } from './gitlab.ts';
import { HUBSPOT_FACTS, hubspotProvider, signHubspot } from './hubspot.ts';
import { INTERCOM_FACTS, intercomProvider, signIntercom } from './intercom.ts';
import { JIRA_FACTS, jiraProvider, signJira } from './jira.ts';
import { LINEAR_FACTS, linearProvider, signLinear } from './linear.ts';
import { MAILGUN_FACTS, mailgunProvider, signMailgun } from './mailgun.ts';
import { META_FACTS, metaProvider, signMeta } from './meta.ts';
import { PADDLE_FACTS, paddleProvider, signPaddle } from './paddle.ts';
import { PAYPAL_FACTS, paypalProvider, signPaypal } from './paypal.ts';
import { POSTMARK_FACTS, postmarkProvider, signPostmark } from './postmark.ts';
import { RESEND_FACTS, resendProvider, signResend } from './resend.ts';
import { SEGMENT_FACTS, segmentProvider, signSegment } from './segment.ts';
import { SENDGRID_FACTS, sendgridProvider, signSendgrid } from './sendgrid.ts';
import { SENTRY_FACTS, sentryProvider, signSentry } from './sentry.ts';
import type { CatalogueProviderOptions } from './signing.ts';
import { SLACK_FACTS, signSlack, slackProvider } from './slack.ts';
import { SQUARE_FACTS, signSquare, squareProvider } from './square.ts';
import { TWILIO_FACTS, signTwilio, twilioProvider } from './twilio.ts';
import { TYPEFORM_FACTS, signTypeform, typeformProvider } from './typeform.ts';
import { VERCEL_FACTS, signVercel, vercelProvider } from './vercel.ts';
import { WOOCOMMERCE_FACTS, signWooCommerce, wooCommerceProvider } from './woocommerce.ts';
import { ZOOM_FACTS, signZoom, zoomProvider } from './zoom.ts';
import { ZENDESK_FACTS, signZendesk, zendeskProvider } from './zendesk.ts';

/** What a source of a catalogue type is configured with: the common options, plus `url` where it is signed. */
export interface CatalogueSourceOptions extends CatalogueProviderOptions {
  /** The public URL the provider sends to, for providers that sign it (`facts.requiredOptions` lists `url`). */
  url?: string;
  /** The verify token typed into the provider's dashboard, for a GET subscription handshake (Meta). */
  verifyToken?: string;
  /** How AWS SNS and PayPal fetch their signing certificates; unset: the global fetch. */
  certificateFetch?: CertificateFetch;
}

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
}

function entry(type: string, facts: ProviderFacts, create: CatalogueEntry['create']): CatalogueEntry {
  return {
    type,
    envVar: `${type.toUpperCase().replaceAll('-', '_')}_WEBHOOK_SECRET`,
    create: (options) => withSourceType(type, create(options)),
    facts,
  };
}

/** The options of a provider that signs its public URL; the factory checks that the URL is one. */
const withUrl = (options: CatalogueSourceOptions) => ({ ...options, url: options.url ?? '' });

/**
 * Every catalogue provider, by type. Stripe, Shopify and Standard Webhooks are registered by ../registry.ts and
 * are not repeated here.
 */
export const CATALOGUE: readonly CatalogueEntry[] = [
  entry('github', GITHUB_FACTS, githubProvider),
  entry('gitlab', GITLAB_FACTS, gitlabProvider),
  entry('bitbucket', BITBUCKET_FACTS, bitbucketProvider),
  entry('jira', JIRA_FACTS, jiraProvider),
  entry('linear', LINEAR_FACTS, linearProvider),
  entry('paddle', PADDLE_FACTS, paddleProvider),
  entry('square', SQUARE_FACTS, (options) => squareProvider(withUrl(options))),
  entry('hubspot', HUBSPOT_FACTS, (options) => hubspotProvider(withUrl(options))),
  entry('intercom', INTERCOM_FACTS, intercomProvider),
  entry('zendesk', ZENDESK_FACTS, zendeskProvider),
  entry('postmark', POSTMARK_FACTS, postmarkProvider),
  entry('mailgun', MAILGUN_FACTS, mailgunProvider),
  entry('resend', RESEND_FACTS, resendProvider),
  entry('clerk', CLERK_FACTS, clerkProvider),
  entry('sentry', SENTRY_FACTS, sentryProvider),
  entry('vercel', VERCEL_FACTS, vercelProvider),
  entry('typeform', TYPEFORM_FACTS, typeformProvider),
  entry('calendly', CALENDLY_FACTS, calendlyProvider),
  entry('woocommerce', WOOCOMMERCE_FACTS, wooCommerceProvider),
  entry('segment', SEGMENT_FACTS, segmentProvider),
  entry('sendgrid', SENDGRID_FACTS, sendgridProvider),
  entry('discord', DISCORD_FACTS, discordProvider),
  entry('slack', SLACK_FACTS, slackProvider),
  entry('twilio', TWILIO_FACTS, (options) => twilioProvider(withUrl(options))),
  entry('zoom', ZOOM_FACTS, zoomProvider),
  entry('adyen', ADYEN_FACTS, adyenProvider),
  entry('meta', META_FACTS, (options) =>
    metaProvider({ ...options, verifyToken: options.verifyToken ?? '' }),
  ),
  entry('aws-sns', AWS_SNS_FACTS, awsSnsProvider),
  entry('paypal', PAYPAL_FACTS, paypalProvider),
];

/** The catalogue types whose signing certificate is fetched from a URL in the message (certificates.ts). */
export const CERTIFICATE_SOURCE_TYPES: readonly string[] = ['aws-sns', 'paypal'];

/** The catalogue entry of a source type, or `undefined`. */
export function catalogueEntry(type: string): CatalogueEntry | undefined {
  return CATALOGUE.find((candidate) => candidate.type === type);
}

export type { BatchProvider } from './batch.ts';
export { discordPublicKey, verifyDiscordSignature } from './discord.ts';
export { sendgridPublicKey, verifySendgridSignature } from './sendgrid.ts';
export type { ProviderFacts } from './facts.ts';
export type { CatalogueProviderOptions } from './signing.ts';
export { snsStringToSign } from './aws-sns.ts';
export { paypalSignedText } from './paypal.ts';
export {
  DISCORD_FACTS,
  adyenProvider,
  awsSnsProvider,
  paypalProvider,
  signSns,
  signPaypal,
  signAdyen,
  bitbucketProvider,
  calendlyProvider,
  clerkProvider,
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
  postmarkProvider,
  resendProvider,
  segmentProvider,
  sendgridProvider,
  sentryProvider,
  slackProvider,
  twilioProvider,
  zoomProvider,
  signBitbucket,
  signCalendly,
  signClerk,
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
  signPostmark,
  signResend,
  signSegment,
  signSendgrid,
  signSentry,
  signSlack,
  signTwilio,
  signZoom,
  signSquare,
  signTypeform,
  signVercel,
  signWooCommerce,
  signZendesk,
  squareProvider,
  typeformProvider,
  vercelProvider,
  wooCommerceProvider,
  zendeskProvider,
};
