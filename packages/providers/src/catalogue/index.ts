import { readdirSync } from 'node:fs';
import type { Provider } from '../types.ts';
import type { CatalogueDefinition, CatalogueSample, CatalogueSourceOptions } from './definition.ts';
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
  /** A templated provider's sample event type and body (`CatalogueSample`), which `@webhook-inbox/samples` signs. */
  sample?: CatalogueSample;
}

/**
 * Every catalogue provider, in type order: each module of ./providers/ declares one as its `definition`, so adding a
 * provider is adding its module (and its test); nothing else lists them. Stripe, Shopify and Standard Webhooks are
 * registered by ../registry.ts and have no module here. Loaded once, when this module is.
 */
export const DEFINITIONS: readonly CatalogueDefinition[] = await loadDefinitions();

async function loadDefinitions(): Promise<CatalogueDefinition[]> {
  const folder = new URL('./providers/', import.meta.url);
  // The sources run as TypeScript, the published package as JavaScript beside its declarations.
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const files = readdirSync(folder)
    .filter((file) => file.endsWith(extension) && !file.endsWith('.d.ts'))
    .sort();
  const modules = await Promise.all(
    files.map((file) => import(new URL(file, folder).href) as Promise<{ definition?: CatalogueDefinition }>),
  );
  return modules.map(({ definition }, at) => {
    if (!definition) throw new TypeError(`catalogue/providers/${files[at]} exports no definition`);
    return definition;
  });
}

function entry(definition: CatalogueDefinition): CatalogueEntry {
  const { type, facts, template, sample } = definition;
  const create = template
    ? (options: CatalogueSourceOptions) => templatedProvider(type, template, options)
    : definition.create;
  return {
    type,
    envVar: `${type.toUpperCase().replaceAll('-', '_')}_WEBHOOK_SECRET`,
    create: (options) => withSourceType(type, create(options)),
    facts,
    ...(template && { template }),
    ...(sample && { sample }),
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
export { discordPublicKey, verifyDiscordSignature } from './providers/discord.ts';
export { sendgridPublicKey, verifySendgridSignature } from './providers/sendgrid.ts';
export type { ProviderFacts } from './facts.ts';
export type { CatalogueProviderOptions } from './signing.ts';
export type { CatalogueDefinition, CatalogueSample, CatalogueSourceOptions } from './definition.ts';
export { snsStringToSign } from './providers/aws-sns.ts';
export { paypalSignedText } from './providers/paypal.ts';
export { adyenProvider, signAdyen } from './providers/adyen.ts';
export { awsSnsProvider, signSns } from './providers/aws-sns.ts';
export { bitbucketProvider, signBitbucket } from './providers/bitbucket.ts';
export { calendlyProvider, signCalendly } from './providers/calendly.ts';
export { clerkProvider, signClerk } from './providers/clerk.ts';
export { customerioProvider, signCustomerio } from './providers/customerio.ts';
export { DISCORD_FACTS, discordProvider, signDiscord } from './providers/discord.ts';
export { githubProvider, signGithub } from './providers/github.ts';
export { gitlabProvider, signGitlab } from './providers/gitlab.ts';
export { hubspotProvider, signHubspot } from './providers/hubspot.ts';
export { intercomProvider, signIntercom } from './providers/intercom.ts';
export { jiraProvider, signJira } from './providers/jira.ts';
export { linearProvider, signLinear } from './providers/linear.ts';
export { mailgunProvider, signMailgun } from './providers/mailgun.ts';
export { metaProvider, signMeta } from './providers/meta.ts';
export { paddleProvider, signPaddle } from './providers/paddle.ts';
export { paypalProvider, signPaypal } from './providers/paypal.ts';
export { postmarkProvider, signPostmark } from './providers/postmark.ts';
export { resendProvider, signResend } from './providers/resend.ts';
export { segmentProvider, signSegment } from './providers/segment.ts';
export { sendgridProvider, signSendgrid } from './providers/sendgrid.ts';
export { sentryProvider, signSentry } from './providers/sentry.ts';
export { signSlack, slackProvider } from './providers/slack.ts';
export { signSquare, squareProvider } from './providers/square.ts';
export { signTwilio, twilioProvider } from './providers/twilio.ts';
export { signTypeform, typeformProvider } from './providers/typeform.ts';
export { signVercel, vercelProvider } from './providers/vercel.ts';
export { signWooCommerce, wooCommerceProvider } from './providers/woocommerce.ts';
export { signZendesk, zendeskProvider } from './providers/zendesk.ts';
export { signZoom, zoomProvider } from './providers/zoom.ts';
