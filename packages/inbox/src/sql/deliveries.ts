import { appendAttempt, type AttemptRecord } from './effect-attempts.ts';
import {
  deliveryFailureUpdate,
  deliveryGate,
  deliverySuccessUpdate,
  pauseUpdate,
} from './destination-states.ts';
import { freeSlotUpdate, slotTakeUpdate, type SlotTerms } from './destination-slots.ts';
import {
  completeKeyUpdate,
  failKeyUpdate,
  keyClaim,
  KEY_CLAIM_COLUMNS,
  type ClaimFence,
  type KeyClaimColumns,
  type EffectRef,
} from './idempotency-keys.ts';
import { Params, type Statement } from './statement.ts';
import { PAYLOAD_OF_EVENT } from './webhook-events.ts';
import type { DestinationState } from '@webhook-inbox/db/statuses';

/**
 * A destination delivery's statements that span tables, one round trip each: its start (the breaker's gate, the
 * event it sends, its key claimed and a concurrency slot taken) and its end (the attempt's row, the key's mark,
 * the breaker, the slot freed). Each is composed of the fragments the tables' own modules write, so every table's
 * SQL is still written once, there.
 */

/**
 * What a delivery's start answers: the breaker's gate, the event (its type null when it is gone, its payload null
 * once purged), and, when the gate let it through and the payload is there, its key's claim (`keyClaim`: null
 * when the key is completed or held) and, with a claim, a slot (null when every slot is held).
 */
export interface DeliveryStart extends KeyClaimColumns {
  state: DestinationState | null;
  probeAt: Date | null;
  probe: boolean;
  type: string | null;
  receivedAt: Date | null;
  payload: string | null;
  slot: number | null;
  slotToken: string | null;
}

/**
 * A delivery's start in one statement: the breaker's gate (`deliveryGate`: a due probe is taken), the event, and,
 * only where the gate lets it through and the payload is there, the key's claim (`keyClaim`) and, only with the
 * claim, a free slot (`takeSlot`). So a delivery that will not be sent claims nothing and holds no slot; one that
 * claimed its key but found every slot held waits for a slot on its own (`takeSlot`).
 */
export function startDelivery(
  destination: { name: string; probeAfterMs: number },
  ref: EffectRef,
  keyLeaseMs: number,
  slot: SlotTerms,
): Statement {
  const params = new Params();
  const gate = deliveryGate(params, destination.name, destination.probeAfterMs);
  return {
    name: 'webhook_inbox_start_delivery',
    text: `
      with ${gate},
      event as (
        select e.type, e.received_at, ${PAYLOAD_OF_EVENT} as payload
          from webhook_events e
         where e.provider = ${params.add(ref.provider)} and e.event_id = ${params.add(ref.eventId)}
      ),
      sendable as (
        select from gate, event
         where gate.state is distinct from 'paused' and (gate.state is distinct from 'open' or gate.probe)
           and event.payload is not null
      ),
      ${keyClaim(params, ref, keyLeaseMs, 'exists (select from sendable)')},
      slot_taken as (${slotTakeUpdate(params, slot, 'exists (select from key_claim)')})
      select gate.*, event.type, event.received_at as "receivedAt", event.payload,
             ${KEY_CLAIM_COLUMNS},
             slot_taken.slot, slot_taken.token::text as "slotToken"
        from gate left join event on true left join key_claim on true left join key_prior on true
             left join slot_taken on true`,
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
      with ${appendAttempt(params, end.attempt)},
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
      with ${appendAttempt(params, end.attempt)},
      slot_freed as (${freeSlotUpdate(params, end.destination, end.slot.slot, end.slot.token)}),
      released as (${failKeyUpdate(params, end.ref, end.fence, error)}),
      breaker as (${breaker})
      select (select state from breaker) as state, exists (select from attempts_added) as "attemptAdded"`,
    values: params.values,
  };
}
