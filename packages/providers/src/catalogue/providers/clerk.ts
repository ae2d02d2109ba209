import type { Provider } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import { SVIX_RETRIES, SVIX_TEMPLATE, SVIX_TOLERANCE_SECONDS, signSvix } from '../svix-based.ts';
import { templatedProvider } from '../template-data.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const CLERK_FACTS: ProviderFacts = {
  scheme:
    'Standard Webhooks through Svix: svix-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>", keyed with ' +
    'the base64 part of the whsec_ signing secret',
  eventKey:
    'svix-id (the message id, kept by retries); without it the signature cannot be checked (invalid_signature)',
  eventType: "the body's type (user.created, session.ended)",
  toleranceSeconds: SVIX_TOLERANCE_SECONDS,
  retries: SVIX_RETRIES,
  quirks: 'delivered by Svix: svix-* headers, whsec_ secret',
  requiredOptions: [],
  docs: 'https://clerk.com/docs/guides/development/webhooks/overview',
};

/** The catalogue's clerk: its facts, its scheme as template data (Svix's), its paths into payloads. */
export const definition = {
  type: 'clerk',
  facts: CLERK_FACTS,
  template: SVIX_TEMPLATE,
  subject: ['/data/id', '/data/email_addresses/*/email_address', '/data/user_id'],
  caseless: { subject: ['/data/email_addresses/*/email_address'] },
} satisfies CatalogueDefinition;

/**
 * Clerk: webhooks delivered by Svix, so Standard Webhooks with `svix-*` headers (see standard-webhooks.ts). The
 * signing secret is the endpoint's `whsec_...` value from the Clerk dashboard.
 *
 * Event key: `svix-id`. Type: the body's `type`, e.g. `user.created`.
 *
 * @example
 * const clerk = clerkProvider({ secrets: [process.env.CLERK_WEBHOOK_SECRET] });
 */
export function clerkProvider(options: CatalogueProviderOptions): Provider {
  return templatedProvider('clerk', definition.template, options);
}

/** The `svix-*` headers Clerk would send with this body, for tests and the dev CLI. */
export const signClerk = signSvix;
