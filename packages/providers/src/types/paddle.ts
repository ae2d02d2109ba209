/**
 * Paddle Billing's payload types for `inbox.on('paddle', ...)`, from `@paddle/paddle-node-sdk`'s notification
 * response interfaces: the snake_case JSON Paddle sends (`IEvents`), not the SDK's camelCase entity classes, which
 * describe what its `unmarshal` returns. An optional peer dependency: a team that handles Paddle events installs
 * it and imports this module once, which adds `paddle` to `ProviderPayloads`; no other module of the package
 * names it.
 *
 * @example
 * import type { PaddleInboxEvent } from '@webhook-inbox/providers/paddle';
 * createInbox().on('paddle', 'transaction.completed', {
 *   fulfil: async ({ event, tx }) => grant(tx, event.payload.data.customer_id), // typed
 * });
 */
import type { IEvents } from '@paddle/paddle-node-sdk';
import type { TypedInboxEvent } from '../payloads.ts';

/** Every Paddle event type (`transaction.completed`, `subscription.created`, ...), to its payload. */
export type PaddlePayloads = {
  [Event in IEvents as `${Event['event_type']}`]: Event;
};

export type PaddleEventType = Extract<keyof PaddlePayloads, string>;

/** A Paddle event, its payload typed by its type; for a union of types, a union `event.type` narrows. */
export type PaddleInboxEvent<T extends PaddleEventType = PaddleEventType> = TypedInboxEvent<'paddle', T>;

declare module '../payloads.ts' {
  interface ProviderPayloads {
    paddle: PaddlePayloads;
  }
}
