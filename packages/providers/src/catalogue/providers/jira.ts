import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
export const JIRA_FACTS: ProviderFacts = {
  scheme:
    'X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>, keyed with the secret of an admin webhook ' +
    '(WebSub style; webhooks of Connect and OAuth apps are not signed this way)',
  eventKey:
    'X-Atlassian-Webhook-Identifier (unique within the site, unchanged across retries); refused as ' +
    'invalid_payload when absent',
  eventType: "the body's webhookEvent (jira:issue_created, comment_created)",
  toleranceSeconds: undefined,
  retries:
    'up to 5 retries with backoff on 408, 409, 425, 429, 5xx and connection failures ' +
    '(X-Atlassian-Webhook-Retry counts them)',
  quirks:
    'only admin webhooks with a secret are signed; Connect and OAuth app webhooks are authenticated by JWT, not supported here',
  requiredOptions: [],
  docs: 'https://developer.atlassian.com/cloud/jira/platform/webhooks/',
};

/** The catalogue's jira: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'jira',
  facts: JIRA_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-Hub-Signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' },
    eventKey: { header: 'X-Atlassian-Webhook-Identifier', unsigned: true },
    eventType: { pointer: '/webhookEvent', required: true },
    keepHeaders: ['X-Atlassian-Webhook-Flow', 'X-Atlassian-Webhook-Retry'],
  },
  eventFacts: [
    { label: 'Project', paths: ['/issue/fields/project/key'] },
    { label: 'Issue', paths: ['/issue/key'] },
  ],
  excerpt: ['/webhookEvent', '/timestamp', '/issue/id', '/issue/key', '/issue/fields/project/key'],
} satisfies CatalogueDefinition;

/**
 * Jira Cloud admin webhooks with a secret: `X-Hub-Signature: sha256=<hex>`, the HMAC-SHA256 of the raw body keyed
 * with the webhook's secret (the WebSub `method=signature` form). Nothing but the body is signed.
 *
 * Event key: `X-Atlassian-Webhook-Identifier`, which retries keep. Type: the body's `webhookEvent`, e.g.
 * `jira:issue_updated`.
 *
 * @example
 * const jira = jiraProvider({ secrets: [process.env.JIRA_WEBHOOK_SECRET] });
 */
export function jiraProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('jira', definition.template, options);
}

/** The `X-Hub-Signature` header value Jira would send for this body; send it with `X-Atlassian-Webhook-Identifier`. */
export const signJira = bodySigner('jira', definition.template);
