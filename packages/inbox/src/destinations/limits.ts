/**
 * A destination's rate limit and concurrency, shared by every worker process that delivers to it: both live in
 * PostgreSQL, on the destination's own rows, so one limited destination never touches another's.
 *
 * - Concurrency: `concurrency` leased slots (`destination_slots`). A delivery takes one before its request (with
 *   its start, `slotTerms`) and frees it after the answer; while all are held it polls, backing off, for the
 *   first one freed (`takeSlot`).
 * - Rate: the next start time on the destination's state row (`next_start_at`), moved one interval on by each
 *   delivery that reserves it, so starts are evenly spaced (no burst) across workers. A destination without a
 *   rate limit never reads it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { destinationSlots, destinationStates } from '../sql/index.ts';
import type { SlotTerms } from '../sql/destination-slots.ts';
import type { Destination } from './config.ts';

/** A slot this delivery holds until `free()`, or until the statement that ends its attempt frees it. */
export interface HeldSlot {
  slot: number;
  token: string;
  free(): Promise<void>;
}

type Limited = Pick<Destination, 'name' | 'concurrency' | 'rateLimit' | 'timeoutMs'>;

const FIRST_POLL_MS = 10;
const LAST_POLL_MS = 250;

export class DestinationLimits {
  readonly #pool: pg.Pool;
  readonly #destination: Limited;
  readonly #intervalMs: number;
  /** Which slots a delivery takes, for how long: for the statement that takes one with the delivery's start. */
  readonly slotTerms: SlotTerms;

  /** `marginMs`: how long a slot's lease outlives the request (the attempt's record). */
  constructor(pool: pg.Pool, destination: Limited, marginMs: number) {
    this.#pool = pool;
    this.#destination = destination;
    this.#intervalMs = destination.rateLimit ? 1000 / destination.rateLimit : 0;
    this.slotTerms = {
      destination: destination.name,
      concurrency: destination.concurrency,
      // A slot is held through the wait for the rate limit too: at most one start per slot ahead of this one.
      leaseMs: destination.timeoutMs + marginMs + this.#intervalMs * destination.concurrency,
    };
  }

  /** At a worker's start: the destination's slots exist. */
  async register(): Promise<void> {
    await this.#pool.query(
      destinationSlots.registerSlots(this.#destination.name, this.#destination.concurrency),
    );
  }

  /**
   * A free slot, waited for while every slot is held; undefined when `signal` aborts first (the worker stops,
   * or the caller's bound on the wait passed).
   */
  async takeSlot(signal: AbortSignal): Promise<HeldSlot | undefined> {
    for (let pollMs = FIRST_POLL_MS; !signal.aborted; pollMs = Math.min(pollMs * 2, LAST_POLL_MS)) {
      const {
        rows: [taken],
      } = await this.#pool.query<{ slot: number; token: string }>(destinationSlots.takeSlot(this.slotTerms));
      if (taken) return this.held(taken.slot, taken.token);
      await sleep(pollMs, undefined, { signal }).catch(() => undefined);
    }
    return undefined;
  }

  /** A slot this delivery took (here, or with its start), to free after its answer. */
  held(slot: number, token: string): HeldSlot {
    const name = this.#destination.name;
    return {
      slot,
      token,
      free: () => this.#pool.query(destinationSlots.freeSlot(name, slot, token)).then(),
    };
  }

  /** Resolves at this delivery's start under the rate limit (at once without one). */
  async awaitStart(): Promise<void> {
    if (this.#intervalMs === 0) return;
    const {
      rows: [reserved],
    } = await this.#pool.query<{ waitMs: number }>(
      destinationStates.reserveStart(this.#destination.name, this.#intervalMs),
    );
    if (reserved && reserved.waitMs > 0) await sleep(reserved.waitMs);
  }
}
