/**
 * Reading Stripe objects whose shape changed across API versions. The `stripe` package types the current version;
 * an endpoint pinned to an older one sends older shapes, and one Stripe account can have both. Each helper accepts
 * either and is tested on real payloads of both kinds.
 */

/** A reference Stripe sends as an id, or as the object when expanded. */
type Ref = string | { id: string } | null | undefined;

export function idOf(ref: Ref): string | null {
  if (typeof ref === 'string') return ref || null;
  return ref?.id ?? null;
}

/** The invoice fields that say which subscription it bills, before and since API 2025-03-31 ("basil"). */
export interface InvoiceSubscriptionShape {
  /** Since basil. */
  parent?: { subscription_details?: { subscription?: Ref } | null } | null;
  /** Before basil. */
  subscription?: Ref;
}

/** The subscription an invoice bills, or null for a one-off invoice. */
export function invoiceSubscriptionId(invoice: InvoiceSubscriptionShape): string | null {
  return idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(invoice.subscription);
}

/** The subscription fields that moved: `current_period_end` went from the subscription to its items in basil. */
export interface SubscriptionShape {
  current_period_end?: number | null;
  items?: {
    data?: ReadonlyArray<{ current_period_end?: number | null; price?: { id?: string } | null }>;
  } | null;
}

/** End of the current period (the latest over the items, since items can renew apart), or null. */
export function subscriptionPeriodEnd(subscription: SubscriptionShape): Date | null {
  const seconds =
    subscription.current_period_end ??
    Math.max(...(subscription.items?.data ?? []).map((item) => item.current_period_end ?? -Infinity));
  return Number.isFinite(seconds) ? new Date(seconds * 1000) : null;
}

export function subscriptionPriceId(subscription: SubscriptionShape): string | null {
  return subscription.items?.data?.[0]?.price?.id ?? null;
}

/** A Stripe timestamp (seconds since the epoch) as a Date; null stays null. */
export function fromUnix(seconds: number | null | undefined): Date | null {
  return typeof seconds === 'number' ? new Date(seconds * 1000) : null;
}
