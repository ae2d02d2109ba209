import { z } from 'zod';
import { apiKeyProvider, apiKeySpec } from './api-key.ts';
import { basicAuthProvider } from './basic-auth.ts';
import type { CertificateFetch } from './catalogue/certificates.ts';
import { CATALOGUE, catalogueEntry, type CatalogueEntry } from './catalogue/index.ts';
import { ed25519Coverage, ed25519Provider, ed25519Spec } from './ed25519.ts';
import { checkHmacRules, hmacCoverage, hmacProvider, hmacSpec } from './hmac.ts';
import { shopifyProvider } from './shopify.ts';
import { PROVIDER_NAME, standardWebhooksProvider } from './standard-webhooks.ts';
import { stripeProvider } from './stripe.ts';
import { CREDENTIAL } from './template-rules.ts';
import { checkTemplate } from './template-rules.ts';
import { templateFields, type TemplateSpec } from './template-schema.ts';
import type { Provider } from './types.ts';

// The sources file's schema (`WEBHOOK_SOURCES_FILE`, read by sources-file.ts) and how a declared source becomes a
// `Provider`. A source is a named endpoint, `/webhooks/<name>`: its name is also its dedupe namespace (the
// `provider` column of webhook_events), so two sources of one type never share keys.

const secretFields = {
  /** Secrets inline; more than one during a rotation (any may match; the first signs handshakes and `send`). */
  secrets: z.array(z.string().min(1)).default([]),
  /** Files each holding one secret (Kubernetes/Docker secrets), relative to the sources file; read at start-up. */
  secretFiles: z.array(z.string().min(1)).default([]),
};
const tolerance = { toleranceSeconds: z.int().positive().max(86_400).optional() };

const stripeSource = z.object({ type: z.literal('stripe'), ...secretFields, ...tolerance }).strict();
const shopifySource = z.object({ type: z.literal('shopify'), ...secretFields }).strict();
const standardSource = z
  .object({ type: z.literal('standard-webhooks'), ...secretFields, ...tolerance })
  .strict();

const issueAdder = (ctx: z.RefinementCtx) => (path: string[], message: string) =>
  ctx.addIssue({ code: 'custom', path, message });

const hmacSource = z
  .object({ type: z.literal('hmac'), ...secretFields, hmac: hmacSpec, ...templateFields })
  .strict()
  .superRefine((source, ctx) => {
    checkTemplate(source, ctx, hmacCoverage(source.hmac));
    checkHmacRules(source.hmac, source, issueAdder(ctx));
  });
const basicAuthSource = z
  .object({ type: z.literal('basic-auth'), ...secretFields, ...templateFields })
  .strict()
  .superRefine((source, ctx) => checkTemplate(source, ctx, CREDENTIAL));
const apiKeySource = z
  .object({ type: z.literal('api-key'), ...secretFields, apiKey: apiKeySpec, ...templateFields })
  .strict()
  .superRefine((source, ctx) => checkTemplate(source, ctx, CREDENTIAL));
const ed25519Source = z
  .object({
    type: z.literal('ed25519'),
    ...secretFields,
    ed25519: ed25519Spec.prefault({}),
    ...templateFields,
  })
  .strict()
  .superRefine((source, ctx) => checkTemplate(source, ctx, ed25519Coverage(source.ed25519)));

/**
 * A source of a catalogue provider's type (`type: github`): its secrets, a tolerance overriding the provider's own,
 * and the options the provider requires besides (`url` for the providers that sign their public URL).
 */
function catalogueSource(entry: CatalogueEntry) {
  const needsUrl = entry.facts.requiredOptions.includes('url');
  return z
    .object({
      type: z.literal(entry.type),
      ...secretFields,
      ...tolerance,
      url: z
        .url({ protocol: /^https?$/, error: 'must be the absolute http(s) URL the provider sends to' })
        .optional(),
      verifyToken: z.string().min(1).optional(),
    })
    .strict()
    .superRefine((source, ctx) => {
      const needsToken = entry.facts.requiredOptions.includes('verifyToken');
      if (needsToken !== (source.verifyToken !== undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['verifyToken'],
          message: needsToken
            ? `is required: ${entry.type} proves the endpoint with the verify token typed into its dashboard`
            : `is not an option of ${entry.type}`,
        });
      }
      if (needsUrl && source.url === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: `is required: ${entry.type} signs the URL it sends to`,
        });
      }
      if (!needsUrl && source.url !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: `is not an option of ${entry.type} (it does not sign its URL)`,
        });
      }
    });
}

const BUILTIN_TYPES = [
  'stripe',
  'shopify',
  'standard-webhooks',
  'hmac',
  'basic-auth',
  'api-key',
  'ed25519',
] as const;
export const SOURCE_TYPES: readonly string[] = [...BUILTIN_TYPES, ...CATALOGUE.map((entry) => entry.type)];

const builtinSources = [
  stripeSource,
  shopifySource,
  standardSource,
  hmacSource,
  basicAuthSource,
  apiKeySource,
  ed25519Source,
] as const;
export type BuiltinSource = z.output<(typeof builtinSources)[number]>;

/** A source of a catalogue type, as the file declares it. */
export interface CatalogueSource {
  type: string;
  secrets: string[];
  secretFiles: string[];
  toleranceSeconds?: number | undefined;
  url?: string | undefined;
  verifyToken?: string | undefined;
}

export const sourceSpec: z.ZodType<BuiltinSource | CatalogueSource> = z.discriminatedUnion(
  'type',
  [...builtinSources, ...CATALOGUE.map(catalogueSource)],
  { error: `type must be one of ${SOURCE_TYPES.join(', ')}` },
);

/** The whole file: `sources:` mapping each name to its source. */
export const sourcesFileSpec = z
  .object({
    sources: z.record(
      z.string().regex(PROVIDER_NAME, { error: 'a source name is lower-case letters, digits and "-"' }),
      sourceSpec,
    ),
  })
  .strict();

/** A declared source, its secret files read: what `createSourceProvider` builds. */
export type SourceDefinition = (BuiltinSource | CatalogueSource) & { name: string };

/** Whether the source is of a type this module builds itself rather than one of the catalogue's. */
export function isBuiltinSource(source: SourceDefinition): source is BuiltinSource & { name: string } {
  return (BUILTIN_TYPES as readonly string[]).includes(source.type);
}

/** The template options of a template source (everything but its type, secrets and authentication block). */
function templateOf(source: TemplateSpec): TemplateSpec {
  return {
    eventKey: source.eventKey,
    eventType: source.eventType,
    body: source.body,
    formJsonFields: source.formJsonFields,
    batch: source.batch,
    handshake: source.handshake,
    response: source.response,
    publicUrl: source.publicUrl,
  };
}

/**
 * The provider of one declared source. Throws (a `TypeError` naming the source and the secret by position) when a
 * secret is malformed for its type, so a wrong file fails at start-up.
 */
export function createSourceProvider(
  source: SourceDefinition,
  defaultToleranceSeconds: number,
  certificateFetch?: CertificateFetch,
): Provider {
  if (!isBuiltinSource(source)) return createCatalogueProvider(source, certificateFetch);
  const { name, secrets } = source;
  switch (source.type) {
    case 'stripe':
      return stripeProvider({
        name,
        secrets,
        toleranceSeconds: source.toleranceSeconds ?? defaultToleranceSeconds,
      });
    case 'shopify':
      return shopifyProvider({ name, secrets });
    case 'standard-webhooks':
      return standardWebhooksProvider({
        name,
        secrets,
        toleranceSeconds: source.toleranceSeconds ?? defaultToleranceSeconds,
      });
    case 'hmac':
      return hmacProvider({
        name,
        secrets,
        hmac: source.hmac,
        template: templateOf(source),
        toleranceSeconds: defaultToleranceSeconds,
      });
    case 'basic-auth':
      return basicAuthProvider({ name, secrets, template: templateOf(source) });
    case 'api-key':
      return apiKeyProvider({ name, secrets, apiKey: source.apiKey, template: templateOf(source) });
    case 'ed25519':
      return ed25519Provider({
        name,
        secrets,
        ed25519: source.ed25519,
        template: templateOf(source),
        toleranceSeconds: defaultToleranceSeconds,
      });
  }
}

/** A catalogue type's provider; its tolerance, unless the source sets one, is the provider's documented one. */
function createCatalogueProvider(
  source: CatalogueSource & { name: string },
  certificateFetch: CertificateFetch | undefined,
): Provider {
  const entry = catalogueEntry(source.type);
  if (entry === undefined) throw new TypeError(`unknown source type ${JSON.stringify(source.type)}`);
  const { name, secrets, toleranceSeconds, url, verifyToken } = source;
  return entry.create({ name, secrets, toleranceSeconds, url, verifyToken, certificateFetch });
}
