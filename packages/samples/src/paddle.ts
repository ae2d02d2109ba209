import type { PaddlePayloads } from '@webhook-inbox/providers/paddle';
import type { SampleBodies } from './shape.ts';

// Paddle Billing's sample bodies, one per event type, in the shape of `@paddle/paddle-node-sdk`'s notification
// interfaces (what `@webhook-inbox/providers/paddle` types `event.payload` by). `satisfies` holds each to its type;
// the builder (business.ts) gives each delivery a fresh `event_id` and `occurred_at`.
// `webhook-inbox send paddle <type>` posts them.

const CUSTOMER = 'ctm_01hv8wt8nffez4p2t6typn4a5j';
const CREATED = '2026-12-05T09:00:00.000Z';

/** The sample body of each Paddle event type `send` knows, by the type the receiver records. */
export const PADDLE_SAMPLE_BODIES = {
  'transaction.completed': {
    event_id: 'evt_01hv8x2acma2gz3he3bkwfmhgz',
    notification_id: 'ntf_01hv8x2af1bdbaqtb00cqqcq7a',
    event_type: 'transaction.completed',
    occurred_at: CREATED,
    data: {
      id: 'txn_01hv8wptq8987qeep44cyrewp9',
      status: 'completed',
      customer_id: CUSTOMER,
      address_id: 'add_01hv8wt8r4rkxch3hq6h8qzmd0',
      currency_code: 'USD',
      origin: 'web',
      subscription_id: 'sub_01hv8x29kz0t586xy6zn1a62ny',
      collection_mode: 'automatic',
      items: [],
      payments: [],
      created_at: CREATED,
      updated_at: CREATED,
      billed_at: CREATED,
    },
  },
  'subscription.created': {
    event_id: 'evt_01hv8x2bdbd2fw6ezzsfz5cw4s',
    notification_id: 'ntf_01hv8x2bgyb9cg1dvc6vwd2gn6',
    event_type: 'subscription.created',
    occurred_at: CREATED,
    data: {
      id: 'sub_01hv8x29kz0t586xy6zn1a62ny',
      status: 'active',
      transaction_id: 'txn_01hv8wptq8987qeep44cyrewp9',
      customer_id: CUSTOMER,
      address_id: 'add_01hv8wt8r4rkxch3hq6h8qzmd0',
      currency_code: 'USD',
      created_at: CREATED,
      updated_at: CREATED,
      started_at: CREATED,
      first_billed_at: CREATED,
      next_billed_at: '2027-01-05T09:00:00.000Z',
      collection_mode: 'automatic',
      billing_cycle: { interval: 'month', frequency: 1 },
      items: [],
    },
  },
} satisfies SampleBodies<PaddlePayloads, 'transaction.completed' | 'subscription.created'>;

/** A Paddle event type with a sample body. */
export type PaddleSampleType = keyof typeof PADDLE_SAMPLE_BODIES;

export function isPaddleSampleType(type: string): type is PaddleSampleType {
  return Object.hasOwn(PADDLE_SAMPLE_BODIES, type);
}
