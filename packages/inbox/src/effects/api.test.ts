import { describe, expectTypeOf, it } from 'vitest';
import { createInbox } from '../inbox.ts';
import { external, type ShopifyInboxEvent, type Tx } from './types.ts';

describe('inbox.on typing', () => {
  it('narrows Stripe payloads by event type, and keeps Shopify payloads unknown', () => {
    createInbox()
      .on('stripe', 'checkout.session.completed', {
        provision: async ({ event, tx, idempotencyKey }) => {
          expectTypeOf(event.payload.type).toEqualTypeOf<'checkout.session.completed'>();
          expectTypeOf(event.payload.data.object.customer_details).not.toBeAny();
          expectTypeOf(tx).toEqualTypeOf<Tx>();
          expectTypeOf(idempotencyKey).toBeString();
          await Promise.resolve();
        },
        mail: external({
          scope: (event) => {
            expectTypeOf(event.payload.data.object.object).toEqualTypeOf<'checkout.session'>();
            return 'x';
          },
          run: ({ event }) => {
            expectTypeOf(event.type).toEqualTypeOf<'checkout.session.completed'>();
          },
        }),
      })
      .on('stripe', ['customer.subscription.created', 'customer.subscription.deleted'], {
        upsert: ({ event }) => {
          expectTypeOf(event.payload.data.object.object).toEqualTypeOf<'subscription'>();
          if (event.type === 'customer.subscription.deleted') {
            expectTypeOf(event.payload.type).toEqualTypeOf<'customer.subscription.deleted'>();
          }
        },
      })
      .on('shopify', 'orders/create', {
        save: ({ event }) => {
          expectTypeOf(event).toEqualTypeOf<ShopifyInboxEvent<'orders/create'>>();
          expectTypeOf(event.payload).toBeUnknown();
          expectTypeOf(event.shopDomain).toBeString();
        },
        notify: external({
          run: ({ event }) => {
            expectTypeOf(event.shopDomain).toBeString();
          },
        }),
      });
  });

  it('rejects event types Stripe does not have', () => {
    // @ts-expect-error not a Stripe event type
    createInbox().on('stripe', 'checkout.session.finished', { x: () => {} });
  });
});
