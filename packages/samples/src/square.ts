import type { SquarePayloads } from '@webhook-inbox/providers/square';
import type { SampleBodies, Shape } from './shape.ts';

// Square's sample bodies, one per event type, in the shape of the `square` SDK's wire (`Raw`) interfaces (what
// `@webhook-inbox/providers/square` types `event.payload` by). `satisfies` holds each to its type; the builder
// (business.ts) gives each delivery a fresh `event_id` and `created_at`. `webhook-inbox send square <type>` posts
// them.

const CREATED = '2026-12-05T09:00:00.000Z';

/** Square's wire `Payment`, as a `payment.updated` carries it. */
type Payment = NonNullable<
  NonNullable<NonNullable<SquarePayloads['payment.updated']['data']>['object']>['payment']
>;

function payment(status: string) {
  return {
    id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
    created_at: CREATED,
    updated_at: CREATED,
    amount_money: { amount: 1000, currency: 'USD' },
    total_money: { amount: 1000, currency: 'USD' },
    status,
    source_type: 'CARD',
    location_id: 'L88917AVBK2S5',
    order_id: 'gFMqwM4PQ8DVGMQoSaoTwIGHP0HZY',
    receipt_number: 'KkAk',
  } as const satisfies Shape<Payment>;
}

/** The sample body of each Square event type `send` knows, by the type the receiver records. */
export const SQUARE_SAMPLE_BODIES = {
  'payment.created': {
    merchant_id: 'ML1',
    type: 'payment.created',
    event_id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
    created_at: CREATED,
    data: { type: 'payment', id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY', object: { payment: payment('APPROVED') } },
  },
  'payment.updated': {
    merchant_id: 'ML1',
    type: 'payment.updated',
    event_id: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
    created_at: CREATED,
    data: { type: 'payment', id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY', object: { payment: payment('COMPLETED') } },
  },
} satisfies SampleBodies<SquarePayloads, 'payment.created' | 'payment.updated'>;

/** A Square event type with a sample body. */
export type SquareSampleType = keyof typeof SQUARE_SAMPLE_BODIES;

export function isSquareSampleType(type: string): type is SquareSampleType {
  return Object.hasOwn(SQUARE_SAMPLE_BODIES, type);
}
