import { Params, type Statement } from './statement.ts';

/**
 * Statements on `destination_slots`: a destination's concurrency, shared by every worker that delivers to it. A
 * destination has `concurrency` slots (numbered from 0); a delivery takes a free one with a lease before its
 * request and frees it after the answer, so at most `concurrency` requests are in flight whichever worker sends
 * them. A worker that dies holding a slot leaves a lease that runs out.
 */

/** At a worker's start: the destination's slots 0 .. concurrency - 1 (more from another worker's file stay). */
export function registerSlots(destination: string, concurrency: number): Statement {
  return {
    text: `
      insert into destination_slots (destination, slot)
      select $1, slot from generate_series(0, $2::int - 1) slot
      on conflict do nothing`,
    values: [destination, concurrency],
  };
}

/**
 * Takes a free slot below `concurrency` for `leaseMs` (the holder's token returned), or none when all are held.
 * Free slots are locked with SKIP LOCKED and rechecked under the lock, so two workers never take the same one.
 */
export function takeSlot(terms: SlotTerms): Statement {
  const params = new Params();
  return {
    name: 'webhook_inbox_take_destination_slot',
    text: slotTakeUpdate(params, terms, 'true'),
    values: params.values,
  };
}

/** Which slots a delivery may take, and for how long. */
export interface SlotTerms {
  destination: string;
  concurrency: number;
  leaseMs: number;
}

/**
 * `takeSlot`'s update, taken only where `onlyIf` (a condition, SQL) holds, its values added to `params`: for a
 * statement that takes the slot with the delivery's start. Returns `slot` and `token`.
 */
export function slotTakeUpdate(params: Params, terms: SlotTerms, onlyIf: string): string {
  const destination = params.add(terms.destination);
  return `
      update destination_slots s
         set held_until = clock_timestamp() + make_interval(secs => ${params.add(terms.leaseMs)}::float8 / 1000),
             token = gen_random_uuid()
        from (select destination, slot from destination_slots
               where destination = ${destination} and slot < ${params.add(terms.concurrency)}
                 and held_until <= clock_timestamp() and ${onlyIf}
               order by slot limit 1 for update skip locked) free
       where s.destination = free.destination and s.slot = free.slot
      returning s.slot, s.token`;
}

/** Frees the slot this holder took (a lease another delivery took over after it ran out is left alone). */
export function freeSlot(destination: string, slot: number, token: string): Statement {
  const params = new Params();
  return {
    name: 'webhook_inbox_free_destination_slot',
    text: freeSlotUpdate(params, destination, slot, token),
    values: params.values,
  };
}

/** `freeSlot`'s update, its values added to `params`: for a statement that frees the slot with the attempt's end. */
export function freeSlotUpdate(params: Params, destination: string, slot: number, token: string): string {
  return `
      update destination_slots set held_until = '-infinity', token = null
       where destination = ${params.add(destination)} and slot = ${params.add(slot)} and token = ${params.add(token)}
      returning slot`;
}
