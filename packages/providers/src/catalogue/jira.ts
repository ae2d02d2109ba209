import type { Provider } from '../types.ts';
import { bodyHmacProvider, signBodyHmac, type BodyHmacScheme } from './body-hmac.ts';
import type { ProviderFacts } from './facts.ts';
import { bodyString, requiredHeader, type CatalogueProviderOptions } from './signing.ts';
import type { CatalogueDefinition } from './definition.ts';
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

const JIRA: BodyHmacScheme = {
  type: 'jira',
  signature: {
    header: 'x-hub-signature',
    prefix: 'sha256=',
    digest: 'sha256',
    encoding: 'hex',
    sender: 'Jira',
  },
  kept: ['x-atlassian-webhook-flow', 'x-atlassian-webhook-retry'],
  identify: (name, request, body) => ({
    eventId: requiredHeader(name, request, 'x-atlassian-webhook-identifier', 'it is the event key'),
    type: bodyString(name, body, 'webhookEvent'),
  }),
};

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
  return bodyHmacProvider(JIRA, options);
}

/** The `X-Hub-Signature` header value Jira would send for this body; send it with `X-Atlassian-Webhook-Identifier`. */
export function signJira({ payload, secret }: { payload: string | Uint8Array; secret: string }): string {
  return signBodyHmac(JIRA, payload, secret);
}

/** The catalogue's jira: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'jira',
  facts: JIRA_FACTS,
  create: jiraProvider,
  eventFacts: [
    { label: 'Project', paths: ['/issue/fields/project/key'] },
    { label: 'Issue', paths: ['/issue/key'] },
  ],
  excerpt: ['/webhookEvent', '/timestamp', '/issue/id', '/issue/key', '/issue/fields/project/key'],
};
