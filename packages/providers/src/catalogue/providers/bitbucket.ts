import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
export const BITBUCKET_FACTS: ProviderFacts = {
  scheme: 'X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>, keyed with the webhook secret',
  eventKey:
    'X-Request-UUID (kept by retries, which X-Attempt-Number counts); refused as invalid_payload when absent',
  eventType: 'X-Event-Key (repo:push, pullrequest:created)',
  toleranceSeconds: undefined,
  retries:
    'up to 2 retries (3 attempts) when the endpoint fails or times out; history kept only when enabled',
  quirks:
    'the header named X-Hub-Signature carries SHA-256 here (SHA-1 at GitHub); a webhook without a secret is unsigned and refused',
  requiredOptions: [],
  docs: 'https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/',
};

/** The catalogue's bitbucket: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'bitbucket',
  facts: BITBUCKET_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-Hub-Signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' },
    eventKey: { header: 'X-Request-UUID', unsigned: true },
    eventType: { header: 'X-Event-Key', required: true },
    keepHeaders: ['X-Event-Key', 'X-Hook-UUID', 'X-Attempt-Number'],
  },
  eventFacts: [
    { label: 'Repository', paths: ['/repository/full_name'] },
    { label: 'Workspace', paths: ['/repository/workspace/slug'] },
    { label: 'Actor', paths: ['/actor/nickname'], personal: true },
  ],
  subject: ['/repository/full_name', '/actor/nickname'],
  caseless: { subject: ['/repository/full_name', '/actor/nickname'], eventId: true },
  excerpt: ['/repository/full_name', '/repository/workspace/slug', '/pullrequest/id', '/pullrequest/state'],
} satisfies CatalogueDefinition;

/**
 * Bitbucket Cloud: `X-Hub-Signature: sha256=<hex>` (the header GitHub uses for SHA-1, here with SHA-256), the
 * HMAC-SHA256 of the raw body keyed with the webhook's secret. A webhook without a secret is not signed and is
 * refused. Nothing but the body is signed.
 *
 * Event key: `X-Request-UUID`. Type: `X-Event-Key`, e.g. `pullrequest:created`.
 *
 * @example
 * const bitbucket = bitbucketProvider({ secrets: [process.env.BITBUCKET_WEBHOOK_SECRET] });
 */
export function bitbucketProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('bitbucket', definition.template, options);
}

/** The `X-Hub-Signature` header value Bitbucket would send for this body; send it with `X-Request-UUID` and `X-Event-Key`. */
export const signBitbucket = bodySigner('bitbucket', definition.template);
