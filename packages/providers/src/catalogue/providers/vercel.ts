import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
export const VERCEL_FACTS: ProviderFacts = {
  scheme:
    "x-vercel-signature: <hex HMAC-SHA1 of the raw body>, keyed with the webhook secret (an integration's " +
    'webhooks: its client secret)',
  eventKey: "the body's id (the event id); refused as invalid_payload when absent",
  eventType: "the body's type (deployment.created, deployment.succeeded)",
  toleranceSeconds: undefined,
  retries: 'not documented: the Vercel webhook pages give no retry schedule or window',
  quirks: "HMAC-SHA1; an integration's webhooks are keyed with the integration's client secret",
  requiredOptions: [],
  docs: 'https://vercel.com/docs/webhooks/webhooks-api',
};

/** The catalogue's vercel: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'vercel',
  facts: VERCEL_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'x-vercel-signature', algorithm: 'sha1', encoding: 'hex' },
    eventKey: { pointer: '/id' },
    eventType: { pointer: '/type', required: true },
  },
  eventFacts: [
    { label: 'Team', paths: ['/payload/team/id'] },
    { label: 'Project', paths: ['/payload/project/id'] },
  ],
  subject: ['/payload/project/id', '/payload/deployment/id'],
  excerpt: [
    '/id',
    '/type',
    '/createdAt',
    '/payload/team/id',
    '/payload/project/id',
    '/payload/deployment/id',
  ],
} satisfies CatalogueDefinition;

/**
 * Vercel: `x-vercel-signature` is the hex HMAC-SHA1 of the raw body, keyed with the webhook's secret (for an
 * integration's webhooks, the integration's client secret). Nothing else is signed; `createdAt` in the body is
 * not checked against a tolerance because Vercel documents none.
 *
 * Event key: the body's `id`. Type: its `type`, e.g. `deployment.succeeded`.
 *
 * @example
 * const vercel = vercelProvider({ secrets: [process.env.VERCEL_WEBHOOK_SECRET] });
 */
export function vercelProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('vercel', definition.template, options);
}

/** The `x-vercel-signature` header value Vercel would send for this body, for tests and the dev CLI. */
export const signVercel = bodySigner('vercel', definition.template);
