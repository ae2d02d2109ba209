import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
export const INTERCOM_FACTS: ProviderFacts = {
  scheme: "X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>, keyed with the app's client secret",
  eventKey:
    "the body's id (notif_...), the same across a notification's delivery attempts; refused as invalid_payload when absent",
  eventType: "the body's topic (conversation.user.created)",
  toleranceSeconds: undefined,
  retries:
    'the retry schedule of a failed notification is not documented; more than 1000 consecutive errors in 15 ' +
    'minutes pause notifications for 15 minutes; a 429 throttles further notifications from 1 minute up to 2 ' +
    'hours, then drops them; a private app failing for 7 days is suspended',
  quirks: 'HMAC-SHA1; the notification id stays the same across its delivery attempts',
  requiredOptions: [],
  docs: 'https://developers.intercom.com/docs/webhooks/webhook-notifications',
};

/** The catalogue's intercom: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'intercom',
  facts: INTERCOM_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-Hub-Signature', prefix: 'sha1=', algorithm: 'sha1', encoding: 'hex' },
    eventKey: { pointer: '/id' },
    eventType: { pointer: '/topic', required: true },
  },
  eventFacts: [{ label: 'Workspace', paths: ['/app_id'] }],
  subject: ['/data/item/email', '/data/item/id', '/app_id'],
  caseless: { subject: ['/data/item/email'] },
  excerpt: ['/type', '/id', '/topic', '/app_id', '/created_at', '/data/item/type', '/data/item/id'],
} satisfies CatalogueDefinition;

/**
 * Intercom: `X-Hub-Signature: sha1=<hex>`, the HMAC-SHA1 of the raw body keyed with the app's client secret (SHA-1
 * is Intercom's choice, and HMAC-SHA1 is not broken by SHA-1's collisions). Nothing else is signed.
 *
 * Event key: the notification's `id`, which its delivery attempts share (`delivery_attempts` counts them). Type:
 * its `topic`, e.g. `conversation.user.replied`. Intercom's `ping` topic arrives as an ordinary event.
 *
 * @example
 * const intercom = intercomProvider({ secrets: [process.env.INTERCOM_WEBHOOK_SECRET] });
 */
export function intercomProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('intercom', definition.template, options);
}

/** The `X-Hub-Signature` header value Intercom would send for this body, for tests and the dev CLI. */
export const signIntercom = bodySigner('intercom', definition.template);
