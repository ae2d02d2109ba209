/**
 * Stripe's payload types for `inbox.on('stripe', ...)`, from the official `stripe` package's `Stripe.Event` union.
 * An optional peer dependency: a team that handles Stripe events installs it and imports this module once (or
 * `@webhook-inbox/inbox/stripe`, which re-exports it), which adds `stripe` to `ProviderPayloads`; no other module
 * of the packages a team type-checks names it, so a project without Stripe needs neither `stripe` nor
 * `skipLibCheck` for the inbox's declarations.
 *
 * The types are a compile-time view of the installed package's API version: an endpoint pinned to an older
 * version sends older shapes (fields that moved, e.g. `invoice.subscription` before 2025-03-31), so read fields
 * that changed across versions defensively.
 *
 * @example
 * import type { StripeInboxEvent } from '@webhook-inbox/providers/stripe';
 * createInbox().on('stripe', 'charge.refunded', {
 *   book: async ({ event }) => book(event.payload.data.object.amount_refunded), // typed: Stripe.Charge
 * });
 */
import type Stripe from 'stripe';
import type { TypedInboxEvent } from '../payloads.ts';

/** Every Stripe event type (`checkout.session.completed`, ...), to its `Stripe.Event`. */
export type StripePayloads = {
  [Type in Stripe.Event.Type]: Extract<Stripe.Event, { type: Type }>;
};

export type StripeEventType = Stripe.Event.Type;

/**
 * A Stripe event, narrowed by `type`; for a union of types it is a union of events, so checking `event.type`
 * narrows `event.payload`.
 */
export type StripeInboxEvent<T extends StripeEventType = StripeEventType> = TypedInboxEvent<'stripe', T>;

declare module '../payloads.ts' {
  interface ProviderPayloads {
    stripe: StripePayloads;
  }
}
