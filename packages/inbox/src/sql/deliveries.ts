import { appendAttempts, type AttemptRecord } from './effect-attempts.ts';
import {
  deliveryFailureUpdate,
  deliveryGate,
  deliverySuccessUpdate,
  pauseUpdate,
} from './destination-states.ts';
import { freeSlotUpdate } from './destination-slots.ts';
import { completeKeyUpdate, failKeyUpdate, type ClaimFence, type EffectRef } from './idempotency-keys.ts';
import { Params, type Statement } from './statement.ts';
import { PAYLOAD_OF_EVENT } from './webhook-events.ts';
import type { DestinationState } from '@webhook-inbox/db/statuses';

/**
 * A destination delivery's statements that span tables, one round trip each: its start (the breaker's gate and
 * the event it sends) and its end (the attempt's row, the key's mark, the breaker, the slot freed). Each is
 * composed of the fragments the tables' own modules write, so every table's SQL is still written once, there.
 */

/** What a delivery reads before it sends: the breaker's gate, and the event (its type null when it is gone). */
export interface DeliveryStart {
  state: DestinationState | null;
  probeAt: Date | null;
  probe: boolean;
  type: string | null;
  receivedAt: Date | null;
  /** The payload's text; null once purged. */
  payload: string | null;
}

export function startDelivery(
  destination: { name: string; probeAfterMs: number },
  event: { provider: string; eventId: string },
): Statement {
  const params = new Params();
  const gate = deliveryGate(params, destination.name, destination.probeAfterMs);
  return {
    name: 'webhook_inbox_start_delivery',
    text: `
      with ${gate}
      select gate.*, e.type, e.received_at as "receivedAt", ${PAYLOAD_OF_EVENT} as payload
        from gate left join webhook_events e
          on e.provider = ${params.add(event.provider)} and e.event_id = ${params.add(event.eventId)}`,
    values: params.values,
  };
}

/** A sent delivery's end: its attempt's row, the key it claimed, and the concurrency slot it held. */
export interface DeliveryEnd {
  destination: string;
  attempt: AttemptRecord;
  ref: EffectRef;
  fence: ClaimFence;
  slot: { slot: number; token: string };
}

/**
 * What a delivery's end answers: `attemptAdded` false when its attempt's row was not written (a concurrent writer of
 * the effect's history took its number, or the event is gone); `completed` after a 2xx, false when another attempt
 * took the key over meanwhile; `state`, the destination's after a failure (null without its row).
 */
export interface DeliveryEnded {
  attemptAdded: boolean;
  completed?: boolean;
  state?: DestinationState | null;
}

/**
 * A 2xx: the attempt's row, the key completed (if the claim is still this attempt's), the breaker's success, the
 * slot freed. `completed` false: another attempt took the key over meanwhile.
 */
export function deliverySucceeded(end: DeliveryEnd): Statement {
  const params = new Params();
  return {
    name: 'webhook_inbox_delivery_succeeded',
    text: `
      with ${appendAttempts(params, [end.attempt])},
      slot_freed as (${freeSlotUpdate(params, end.destination, end.slot.slot, end.slot.token)}),
      breaker as (${deliverySuccessUpdate(params, end.destination)}),
      completed as (${completeKeyUpdate(params, end.ref, end.fence)})
      select exists (select from completed) as completed, exists (select from attempts_added) as "attemptAdded"`,
    values: params.values,
  };
}

/** How a failed delivery moves its destination's breaker: one failure more, or paused (a 410 Gone). */
export type BreakerMove =
  | { kind: 'failure'; threshold: number; probeAfterMs: number; cause: string }
  | { kind: 'pause'; reason: string };

/**
 * A failure (an answer but 2xx, or none): the attempt's row, the key released as failed with `error`, the
 * breaker moved, the slot freed. Answers the destination's state after (null without its row).
 */
export function deliveryFailed(end: DeliveryEnd, error: string, move: BreakerMove): Statement {
  const params = new Params();
  const breaker =
    move.kind === 'pause'
      ? pauseUpdate(params, end.destination, move.reason)
      : deliveryFailureUpdate(params, end.destination, move.threshold, move.probeAfterMs, move.cause);
  return {
    name: move.kind === 'pause' ? 'webhook_inbox_delivery_gone' : 'webhook_inbox_delivery_failed',
    text: `
      with ${appendAttempts(params, [end.attempt])},
      slot_freed as (${freeSlotUpdate(params, end.destination, end.slot.slot, end.slot.token)}),
      released as (${failKeyUpdate(params, end.ref, end.fence, error)}),
      breaker as (${breaker})
      select (select state from breaker) as state, exists (select from attempts_added) as "attemptAdded"`,
    values: params.values,
  };
}
