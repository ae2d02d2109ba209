import { describe, expect, it } from 'vitest';
import {
  idOf,
  invoiceSubscriptionId,
  subscriptionPeriodEnd,
  subscriptionPriceId,
  type InvoiceSubscriptionShape,
  type SubscriptionShape,
} from '../src/stripe-shapes.ts';
import { fixture } from '@webhook-inbox/testing';

type Envelope<T> = { data: { object: T } };

describe('invoiceSubscriptionId', () => {
  it('reads the subscription of a pre-2025 invoice (top-level `subscription`)', () => {
    const invoice = fixture<Envelope<InvoiceSubscriptionShape>>('stripe/invoice.paid.json').data.object;
    expect(invoice.parent ?? null).toBeNull();
    expect(invoiceSubscriptionId(invoice)).toBe('sub_JsuPyCPhXWfZar');
  });

  it('reads the subscription of a 2025 "basil" invoice (`parent.subscription_details.subscription`)', () => {
    // This fixture is the event's `data` member only.
    const invoice = fixture<{ object: InvoiceSubscriptionShape }>(
      'stripe/invoice.payment_failed.data-only.json',
    ).object;
    expect(invoice.subscription).toBeUndefined();
    expect(invoiceSubscriptionId(invoice)).toBe('sub_1234');
  });

  it('returns null for a one-off invoice, and accepts expanded references', () => {
    expect(invoiceSubscriptionId({ parent: null, subscription: null })).toBeNull();
    expect(
      invoiceSubscriptionId({ parent: { subscription_details: { subscription: { id: 'sub_x' } } } }),
    ).toBe('sub_x');
    expect(idOf('')).toBeNull();
  });
});

describe('subscription fields that moved', () => {
  it('period end from the subscription (old API) or the latest of its items (2025 API)', () => {
    const old = fixture<Envelope<SubscriptionShape>>('stripe/customer.subscription.updated.json').data.object;
    expect(subscriptionPeriodEnd(old)).toEqual(new Date(1_621_572_344 * 1000));
    const basil: SubscriptionShape = {
      items: { data: [{ current_period_end: 1_800_000_000 }, { current_period_end: 1_800_000_100 }] },
    };
    expect(subscriptionPeriodEnd(basil)).toEqual(new Date(1_800_000_100 * 1000));
    expect(subscriptionPeriodEnd({ items: { data: [] } })).toBeNull();
    expect(subscriptionPriceId(old)).toBe('price_1IDQm5JDPojXS6LNM31hxKzp');
  });
});
