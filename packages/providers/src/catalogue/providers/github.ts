import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const GITHUB_FACTS: ProviderFacts = {
  scheme: 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>, keyed with the webhook secret',
  eventKey:
    'X-GitHub-Delivery (a GUID per event, kept by redeliveries); refused as invalid_payload when absent',
  eventType: 'X-GitHub-Event, plus "." and the body\'s action when it has one (pull_request.opened)',
  toleranceSeconds: undefined,
  retries:
    'none automatic; deliveries of the last 3 days can be redelivered by hand or through the REST API ' +
    '(POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts)',
  quirks:
    'no signed timestamp, and X-GitHub-Delivery is not signed: a captured delivery posted again under a new X-GitHub-Delivery is a new event (a template keyed by bodyHash is not); the ping event on hook creation is an ordinary event (type ping)',
  requiredOptions: [],
  docs: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
};

/**
 * GitHub (repository, organization and App webhooks): `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of
 * the raw body keyed with the webhook secret. The legacy SHA-1 `X-Hub-Signature` is not accepted. Nothing but
 * the body is signed: no timestamp, and the `X-GitHub-Delivery` key is not signed, so a captured delivery posted
 * again under a new `X-GitHub-Delivery` is recorded as a new event (SECURITY.md, residual risks).
 *
 * Event key: `X-GitHub-Delivery`, which a redelivery keeps. Type: `X-GitHub-Event` and the body's `action`,
 * e.g. `pull_request.opened`, or `push` for events without actions.
 */
export const definition = {
  type: 'github',
  facts: GITHUB_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-Hub-Signature-256', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' },
    eventKey: { header: 'X-GitHub-Delivery', unsigned: true },
    eventType: { header: 'X-GitHub-Event', required: true, suffix: '/action' },
    keepHeaders: [
      'X-GitHub-Event',
      'X-GitHub-Hook-ID',
      'X-GitHub-Hook-Installation-Target-Type',
      'X-GitHub-Hook-Installation-Target-ID',
    ],
  },
  eventFacts: [
    { label: 'Repository', paths: ['/repository/full_name'] },
    { label: 'Organization', paths: ['/organization/login'] },
    { label: 'App installation', paths: ['/installation/id'] },
    { label: 'Hook target', header: 'x-github-hook-installation-target-type' },
    { label: 'Sender', paths: ['/sender/login'], personal: true },
  ],
  subject: ['/repository/full_name', '/organization/login', '/sender/login'],
  caseless: { subject: ['/repository/full_name', '/organization/login', '/sender/login'], eventId: true },
  excerpt: [
    '/action',
    '/repository/full_name',
    '/organization/login',
    '/installation/id',
    '/ref',
    '/pull_request/number',
    '/pull_request/state',
    '/pull_request/merged',
    '/issue/number',
    '/issue/state',
    '/check_run/id',
    '/check_run/status',
    '/check_run/conclusion',
    '/workflow_run/id',
    '/workflow_run/status',
    '/workflow_run/conclusion',
    '/hook_id',
  ],
} satisfies CatalogueDefinition;

/**
 * @example
 * const github = githubProvider({ secrets: [process.env.GITHUB_WEBHOOK_SECRET] });
 * const event = github.verify({ rawBody, header: (name) => request.headers.get(name) }, new Date());
 */
export function githubProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('github', definition.template, options);
}

/**
 * The `X-Hub-Signature-256` header value GitHub would send for this body, for tests and the dev CLI. Send it with
 * `X-GitHub-Event` and a fresh `X-GitHub-Delivery`.
 */
export const signGithub = bodySigner('github', definition.template);
