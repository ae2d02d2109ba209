import type { Provider } from '../types.ts';
import { bodyHmacProvider, signBodyHmac, type BodyHmacScheme } from './body-hmac.ts';
import type { ProviderFacts } from './facts.ts';
import { requiredHeader, withAction, type CatalogueProviderOptions } from './signing.ts';
import type { CatalogueDefinition } from './definition.ts';
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

const SENTRY: BodyHmacScheme = {
  type: 'sentry',
  signature: {
    header: 'sentry-hook-signature',
    prefix: '',
    digest: 'sha256',
    encoding: 'hex',
    sender: 'Sentry',
  },
  kept: ['sentry-hook-resource', 'sentry-hook-timestamp'],
  identify: (name, request, body) => ({
    eventId: requiredHeader(name, request, 'request-id', 'it is the event key'),
    type: withAction(
      requiredHeader(name, request, 'sentry-hook-resource', 'it is the event type'),
      body.action,
    ),
  }),
};

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
  return bodyHmacProvider(SENTRY, options);
}

/** The `Sentry-Hook-Signature` header value Sentry would send for this body; send it with `Request-ID` and `Sentry-Hook-Resource`. */
export function signSentry({ payload, secret }: { payload: string | Uint8Array; secret: string }): string {
  return signBodyHmac(SENTRY, payload, secret);
}

/** The catalogue's sentry: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'sentry',
  facts: SENTRY_FACTS,
  create: sentryProvider,
  eventFacts: [{ label: 'Installation', paths: ['/installation/uuid'] }],
  subject: ['/data/issue/id', '/installation/uuid'],
  excerpt: ['/action', '/installation/uuid', '/data/issue/id', '/data/issue/status'],
};
