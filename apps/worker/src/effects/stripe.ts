import { accounts, subscriptions } from '../schema.ts';
import {
  external,
  messageIdFor,
  PermanentEffectError,
  type DatabaseEffectFn,
  type ExternalEffect,
  type Tx,
} from '@webhook-inbox/inbox';
import type { StripeInboxEvent } from '@webhook-inbox/inbox/stripe';
import { sql } from 'drizzle-orm';
import type { Mailer } from '../mail.ts';
import {
  fromUnix,
  idOf,
  invoiceSubscriptionId,
  subscriptionPeriodEnd,
  subscriptionPriceId,
  type SubscriptionShape,
} from '../stripe-shapes.ts';

type CheckoutCompleted = StripeInboxEvent<'checkout.session.completed'>;
export const SUBSCRIPTION_EVENTS = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
] as const;
type SubscriptionEvent = StripeInboxEvent<(typeof SUBSCRIPTION_EVENTS)[number]>;
export const INVOICE_EVENTS = ['invoice.paid', 'invoice.payment_failed'] as const;
type InvoiceEvent = StripeInboxEvent<(typeof INVOICE_EVENTS)[number]>;

/** The customer a checkout session belongs to, and where to reach them. */
function checkoutCustomer(event: CheckoutCompleted) {
  const session = event.payload.data.object;
  const email = session.customer_details?.email ?? session.customer_email ?? null;
  return { customerId: idOf(session.customer), email, name: session.customer_details?.name ?? null };
}

/** Upserts the account of the session's customer. A guest checkout (no customer object) has no account. */
export const provisionAccount: DatabaseEffectFn<CheckoutCompleted> = async ({ event, tx, log }) => {
  const { customerId, email, name } = checkoutCustomer(event);
  if (!customerId) {
    log.info('checkout without a Stripe customer: no account to provision');
    return;
  }
  if (!email) throw new PermanentEffectError('the checkout session has no customer email');
  await tx
    .insert(accounts)
    .values({ stripeCustomerId: customerId, email, name })
    .onConflictDoUpdate({
      target: accounts.stripeCustomerId,
      set: { email, name: sql`coalesce(excluded.name, ${accounts.name})`, updatedAt: sql`now()` },
    });
};

interface WelcomeEmailOptions {
  mailer: Mailer;
  /** The domain of Message-IDs (MAIL_FROM's). */
  messageIdDomain: string;
}

/**
 * One welcome email per account: scoped to the customer (to the address for a guest checkout), so a second
 * checkout by the same customer sends nothing. The Message-ID is derived from that scope's idempotency key.
 */
export function sendWelcomeEmail({
  mailer,
  messageIdDomain,
}: WelcomeEmailOptions): ExternalEffect<CheckoutCompleted> {
  return external<CheckoutCompleted>({
    scope: (event) => {
      const { customerId, email } = checkoutCustomer(event);
      if (customerId) return `account:${customerId}`;
      return email ? `email:${email.toLowerCase()}` : undefined;
    },
    run: async ({ event, idempotencyKey, holdLease }) => {
      const { email, name } = checkoutCustomer(event);
      if (!email) throw new PermanentEffectError('the checkout session has no customer email');
      await mailer.send(
        {
          to: email,
          subject: 'Welcome aboard',
          text: `Hello${name ? ` ${name}` : ''},\n\nthank you for signing up. Your account is ready.\n`,
          messageId: messageIdFor(idempotencyKey, messageIdDomain),
        },
        // After the wait for an SMTP connection: a message that waited through a freeze is not sent.
        { beforeSend: holdLease },
      );
    },
  });
}

/**
 * A session that created a subscription: a provisional row, so the subscription exists before (or without) its
 * own events. It never overwrites anything, and any `customer.subscription.*` event replaces it.
 */
export const recordCheckoutSubscription: DatabaseEffectFn<CheckoutCompleted> = async ({ event, tx }) => {
  const session = event.payload.data.object;
  const subscriptionId = idOf(session.subscription);
  const customerId = idOf(session.customer);
  if (!subscriptionId) return;
  if (!customerId) throw new PermanentEffectError('a subscription checkout without a customer');
  await insertProvisional(tx, {
    subscriptionId,
    customerId,
    status: session.payment_status === 'paid' ? 'active' : 'incomplete',
    eventCreated: event.payload.created,
  });
};

/**
 * `customer.subscription.created|updated|deleted`. An event only changes the row if it is newer (Stripe's
 * `created`) than the one that last did, so an older event delivered late never overwrites a newer one, and a
 * deleted subscription is not resurrected. At the same second a deletion wins.
 */
export const upsertSubscription: DatabaseEffectFn<SubscriptionEvent> = async ({ event, tx }) => {
  const subscription = event.payload.data.object;
  const customerId = idOf(subscription.customer);
  if (!customerId) throw new PermanentEffectError('the subscription has no customer');
  const deleted = event.type === 'customer.subscription.deleted';
  const shape = subscription as SubscriptionShape;
  const row = {
    stripeSubscriptionId: subscription.id,
    customerId,
    status: deleted ? 'canceled' : subscription.status,
    priceId: subscriptionPriceId(shape),
    currentPeriodEnd: subscriptionPeriodEnd(shape),
    canceledAt: fromUnix(subscription.canceled_at),
    eventCreatedAt: new Date(event.payload.created * 1000),
    provisional: false,
  };
  await tx
    .insert(subscriptions)
    .values(row)
    .onConflictDoUpdate({
      target: subscriptions.stripeSubscriptionId,
      set: {
        customerId: sql`excluded.customer_id`,
        status: sql`excluded.status`,
        priceId: sql`excluded.price_id`,
        currentPeriodEnd: sql`excluded.current_period_end`,
        canceledAt: sql`excluded.canceled_at`,
        eventCreatedAt: sql`excluded.event_created_at`,
        provisional: false,
        updatedAt: sql`now()`,
      },
      setWhere: sql`${subscriptions.provisional}
        or ${subscriptions.eventCreatedAt} < excluded.event_created_at
        or (${subscriptions.eventCreatedAt} = excluded.event_created_at
            and excluded.status = 'canceled' and ${subscriptions.status} <> 'canceled')`,
    });
};

/**
 * `invoice.paid` / `invoice.payment_failed`: a subscription first seen through its invoice gets a provisional row.
 * The subscription's own events stay the source of truth for its status; this never overwrites them. Reads the
 * subscription from both invoice shapes (`parent.subscription_details` since 2025-03-31, `subscription` before).
 */
export const recordInvoiceSubscription: DatabaseEffectFn<InvoiceEvent> = async ({ event, tx }) => {
  const invoice = event.payload.data.object;
  const subscriptionId = invoiceSubscriptionId(invoice);
  const customerId = idOf(invoice.customer);
  if (!subscriptionId || !customerId) return; // A one-off invoice.
  await insertProvisional(tx, {
    subscriptionId,
    customerId,
    status: event.type === 'invoice.paid' ? 'active' : 'past_due',
    eventCreated: event.payload.created,
  });
};

async function insertProvisional(
  tx: Tx,
  row: { subscriptionId: string; customerId: string; status: string; eventCreated: number },
): Promise<void> {
  await tx
    .insert(subscriptions)
    .values({
      stripeSubscriptionId: row.subscriptionId,
      customerId: row.customerId,
      status: row.status,
      eventCreatedAt: new Date(row.eventCreated * 1000),
      provisional: true,
    })
    .onConflictDoNothing({ target: subscriptions.stripeSubscriptionId });
}
