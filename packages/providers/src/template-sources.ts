import { z } from 'zod';
import { apiKeyProvider, apiKeySpec } from './api-key.ts';
import { basicAuthProvider } from './basic-auth.ts';
import { ed25519Coverage, ed25519Provider, ed25519Spec } from './ed25519.ts';
import { checkHmacRules, hmacCoverage, hmacProvider, hmacSpec } from './hmac.ts';
import { shopifyProvider } from './shopify.ts';
import { standardWebhooksProvider } from './standard-webhooks.ts';
import { stripeProvider } from './stripe.ts';
import { CREDENTIAL, checkTemplate } from './template-rules.ts';
import { templateFields, type TemplateSpec } from './template-schema.ts';
import type { Provider } from './types.ts';

// The sources file's built-in types (sources.ts adds the catalogue's): their schemas, and the provider of a source
// of one of them. Apart from sources.ts so that a catalogue module declared as a template (catalogue/template-data.ts)
// is built by this same path without importing the catalogue back.

export const secretFields = {
  /** Secrets inline; more than one during a rotation (any may match; the first signs handshakes and `send`). */
  secrets: z.array(z.string().min(1)).default([]),
  /** Files each holding one secret (Kubernetes/Docker secrets), relative to the sources file; read at start-up. */
  secretFiles: z.array(z.string().min(1)).default([]),
};
export const tolerance = { toleranceSeconds: z.int().positive().max(86_400).optional() };

const stripeSource = z.object({ type: z.literal('stripe'), ...secretFields, ...tolerance }).strict();
const shopifySource = z.object({ type: z.literal('shopify'), ...secretFields }).strict();
export const standardSource = z
  .object({ type: z.literal('standard-webhooks'), ...secretFields, ...tolerance })
  .strict();

const issueAdder = (ctx: z.RefinementCtx) => (path: string[], message: string) =>
  ctx.addIssue({ code: 'custom', path, message });

export const hmacSource = z
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

export const BUILTIN_TYPES = [
  'stripe',
  'shopify',
  'standard-webhooks',
  'hmac',
  'basic-auth',
  'api-key',
  'ed25519',
] as const;
export const builtinSources = [
  stripeSource,
  shopifySource,
  standardSource,
  hmacSource,
  basicAuthSource,
  apiKeySource,
  ed25519Source,
] as const;
export type BuiltinSource = z.output<(typeof builtinSources)[number]>;

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
    keepHeaders: source.keepHeaders,
  };
}

/** The provider of a source of a built-in type, named `source.name`. */
export function createBuiltinProvider(
  source: BuiltinSource & { name: string },
  defaultToleranceSeconds: number,
): Provider {
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
