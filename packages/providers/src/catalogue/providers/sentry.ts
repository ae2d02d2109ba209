import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
export const SENTRY_FACTS: ProviderFacts = {
  scheme:
    "Sentry-Hook-Signature: <hex HMAC-SHA256 of the raw body>, keyed with the integration's client secret " +
    '(Sentry-Hook-Timestamp is not signed)',
  eventKey: 'Request-ID (one per request); refused as invalid_payload when absent',
  eventType: 'Sentry-Hook-Resource plus "." and the body\'s action (issue.created, event_alert.triggered)',
  toleranceSeconds: undefined,
  retries:
    'none: an answer slower than 1 second is a timeout, and 1,000 timeouts within 24 hours unsubscribe the webhook (not for published partner integrations)',
  quirks:
    'Sentry-Hook-Timestamp is not signed, so no tolerance; the installation webhook uses the same scheme',
  requiredOptions: [],
  docs: 'https://docs.sentry.io/organization/integrations/integration-platform/webhooks/',
};

/** The catalogue's sentry: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'sentry',
  facts: SENTRY_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'Sentry-Hook-Signature', algorithm: 'sha256', encoding: 'hex' },
    eventKey: { header: 'Request-ID', unsigned: true },
    eventType: { header: 'Sentry-Hook-Resource', required: true, suffix: '/action' },
    keepHeaders: ['Sentry-Hook-Resource', 'Sentry-Hook-Timestamp'],
  },
  eventFacts: [{ label: 'Installation', paths: ['/installation/uuid'] }],
  subject: ['/data/issue/id', '/installation/uuid'],
  caseless: { eventId: true },
  excerpt: ['/action', '/installation/uuid', '/data/issue/id', '/data/issue/status'],
} satisfies CatalogueDefinition;

/**
 * Sentry integration-platform webhooks: `Sentry-Hook-Signature` is the hex HMAC-SHA256 of the raw body keyed with
 * the integration's client secret. `Sentry-Hook-Timestamp` is sent but not signed, so no tolerance is applied.
 *
 * Event key: `Request-ID`. Type: `Sentry-Hook-Resource` and the body's `action`, e.g. `issue.resolved`.
 *
 * @example
 * const sentry = sentryProvider({ secrets: [process.env.SENTRY_WEBHOOK_SECRET] });
 */
export function sentryProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('sentry', definition.template, options);
}

/** The `Sentry-Hook-Signature` header value Sentry would send for this body; send it with `Request-ID` and `Sentry-Hook-Resource`. */
export const signSentry = bodySigner('sentry', definition.template);
