/**
 * Stripe's typed events: importing this module (a type-only import is enough) types `inbox.on('stripe', ...)` by the
 * `stripe` package's `Stripe.Event` union (`@webhook-inbox/providers/stripe` adds `stripe` to `ProviderPayloads`).
 * Its own subpath, so that the inbox's other declarations name no `stripe`: a project without Stripe type-checks
 * them without `stripe` installed and without `skipLibCheck`.
 *
 * @example
 * import type { StripeInboxEvent } from '@webhook-inbox/inbox/stripe';
 * type Refunded = StripeInboxEvent<'charge.refunded'>;
 */
export type { StripeEventType, StripeInboxEvent, StripePayloads } from '@webhook-inbox/providers/stripe';
