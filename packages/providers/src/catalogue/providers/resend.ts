import type { Provider } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import { SVIX_RETRIES, SVIX_TEMPLATE, SVIX_TOLERANCE_SECONDS, signSvix } from '../svix-based.ts';
import { templatedProvider } from '../template-data.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const RESEND_FACTS: ProviderFacts = {
  scheme:
    'Standard Webhooks through Svix: svix-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>", keyed with ' +
    'the base64 part of the whsec_ signing secret',
  eventKey:
    'svix-id (the message id, kept by retries); without it the signature cannot be checked (invalid_signature)',
  eventType: "the body's type (email.delivered, email.bounced)",
  toleranceSeconds: SVIX_TOLERANCE_SECONDS,
  retries: SVIX_RETRIES,
  quirks: 'delivered by Svix: svix-* headers, whsec_ secret',
  requiredOptions: [],
  docs: 'https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests',
};

/** The catalogue's resend: its facts, its scheme as template data (Svix's), its paths into payloads. */
export const definition = {
  type: 'resend',
  facts: RESEND_FACTS,
  template: SVIX_TEMPLATE,
  subject: ['/data/email_id', '/data/to/*'],
  caseless: { subject: ['/data/email_id', '/data/to/*'] },
} satisfies CatalogueDefinition;

/**
 * Resend: webhooks delivered by Svix, so Standard Webhooks with `svix-*` headers (see standard-webhooks.ts). The
 * signing secret is the endpoint's `whsec_...` value from the Resend dashboard.
 *
 * Event key: `svix-id`. Type: the body's `type`, e.g. `email.delivered`.
 *
 * @example
 * const resend = resendProvider({ secrets: [process.env.RESEND_WEBHOOK_SECRET] });
 */
export function resendProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('resend', definition.template, options);
}

/** The `svix-*` headers Resend would send with this body, for tests and the dev CLI. */
export const signResend = signSvix;
