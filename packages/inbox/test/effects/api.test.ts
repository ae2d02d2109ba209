import { describe, expect, expectTypeOf, it } from 'vitest';
import { createInbox } from '../../src/inbox.ts';
import { external, type ShopifyInboxEvent, type Tx } from '../../src/effects/types.ts';

// The `expectTypeOf` calls are the compiler's assertions: `pnpm typecheck` checks this file (the package's
// tsconfig includes its tests), so a wrong type fails it wherever the call sits, in a handler that never runs
// included; the `@ts-expect-error` lines fail it when the error they expect is gone. The `expect` calls check at
// run time what the registration did.
describe('inbox.on typing', () => {
  it('narrows Stripe payloads by event type, and keeps Shopify payloads unknown', () => {
    const inbox = createInbox()
      .on('stripe', 'checkout.session.completed', {
        provision: async ({ event, tx, idempotencyKey }) => {
          expectTypeOf(event.payload.type).toEqualTypeOf<'checkout.session.completed'>();
          // @ts-expect-error the payload's type is the registered one, not any other
          expectTypeOf(event.payload.type).toEqualTypeOf<'invoice.paid'>();
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
          // @ts-expect-error a Shopify payload is unknown until a schema parses it
          expectTypeOf(event.payload).toBeObject();
          expectTypeOf(event.shopDomain).toBeString();
        },
        notify: external({
          run: ({ event }) => {
            expectTypeOf(event.shopDomain).toBeString();
          },
        }),
      });

    const route = (provider: string, eventType: string, effect: string, kind: string, position: number) => ({
      provider,
      eventType,
      effect,
      kind,
      position,
    });
    expect(inbox.effectRoutes()).toEqual([
      route('stripe', 'checkout.session.completed', 'provision', 'database', 0),
      route('stripe', 'checkout.session.completed', 'mail', 'external', 1),
      route('stripe', 'customer.subscription.created', 'upsert', 'database', 0),
      route('stripe', 'customer.subscription.deleted', 'upsert', 'database', 0),
      route('shopify', 'orders/create', 'save', 'database', 0),
      route('shopify', 'orders/create', 'notify', 'external', 1),
    ]);
    expect(inbox.effectsFor('stripe', 'checkout.session.completed')).toEqual(['provision', 'mail']);
    expect(inbox.effectsFor('stripe', 'invoice.paid')).toEqual([]);
  });

  it('rejects event types Stripe does not have (at compile time; at run time the type is taken as given)', () => {
    // @ts-expect-error not a Stripe event type
    const inbox = createInbox().on('stripe', 'checkout.session.finished', { x: () => {} });
    expect(inbox.effectsFor('stripe', 'checkout.session.finished')).toEqual(['x']);
  });
});
