/**
 * An external effect's claim, held by the attempt that made it: its fencing token, its renewals, and the proof,
 * right before the effect's call, that the claim is still this attempt's.
 *
 * The proof is local while it can be: the lease ends `leaseMs` after the database's now at the statement that last
 * wrote it (the claim, a renewal), which is after this process sent that statement, so until `leaseMs` after the
 * send by this process's monotonic clock no other attempt can have taken the key (`claimExternalEffects` takes
 * only an expired claim). The monotonic clock keeps counting while a process is stopped (SIGSTOP, a VM paused),
 * so a worker that thaws past that point asks the database: one conditional renewal on the token (`holdClaim`),
 * which fails when the claim was taken, completed, given up or has expired. Half the lease is trusted locally,
 * the other half is the margin for the two clocks' rates and the statement's own time.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { errorFields } from '../error-text.ts';
import * as idempotencyKeys from '../sql/idempotency-keys.ts';
import type { EffectRef } from '../sql/idempotency-keys.ts';
import { LeaseLostError } from './types.ts';

/** Logged when a renewal finds the claim gone. */
export const LOST_ON_RENEWAL = "the effect's claim was taken by another attempt (or ended): renewals stop";

// Renewals, a third of the lease apart (two can be lost before the lease runs out), never more often than this.
const MIN_RENEWAL_MS = 250;

export class Lease {
  readonly fence: idempotencyKeys.ClaimFence;
  readonly #pool: pg.Pool;
  readonly #ref: EffectRef;
  readonly #leaseMs: number;
  readonly #log: Logger;
  /** Until when (performance.now()) the claim is proven held without asking the database. */
  #provenUntil: number;
  #lost: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** `sentAt`: performance.now() when the claim's statement was sent. */
  constructor(
    pool: pg.Pool,
    ref: EffectRef,
    fence: idempotencyKeys.ClaimFence,
    leaseMs: number,
    sentAt: number,
    log: Logger,
  ) {
    this.#pool = pool;
    this.#ref = ref;
    this.fence = fence;
    this.#leaseMs = leaseMs;
    this.#log = log;
    this.#provenUntil = sentAt + leaseMs / 2;
  }

  /**
   * Resolves when the claim is still this attempt's, extended when it had to ask; throws `LeaseLostError` when
   * it is not (and from then on, without asking again).
   */
  async hold(): Promise<void> {
    if (this.#lost) throw new LeaseLostError(this.#lost);
    if (performance.now() < this.#provenUntil) return;
    if (!(await this.#renew())) throw new LeaseLostError(this.#lost!);
  }

  /**
   * Keeps the lease ahead while the attempt runs the effect and marks it: renewed every third of the lease, each
   * time for a whole lease from now, so a slow effect (or a mark retried through an outage) keeps its key, and a
   * worker that dies or freezes loses it one lease after its last renewal. A renewal that cannot reach the
   * database is logged; the lease it did not extend still runs to its end. One that finds the claim lost stops.
   */
  renewWhileHeld(): void {
    this.#timer = setInterval(
      () => {
        this.#renew().then(
          (held) => {
            if (!held) this.#log.warn({ keyAttempts: this.fence.keyAttempts }, LOST_ON_RENEWAL);
          },
          (error: unknown) =>
            this.#log.warn({ err: errorFields(error) }, "could not renew the effect's claim"),
        );
      },
      Math.max(this.#leaseMs / 3, MIN_RENEWAL_MS),
    );
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One conditional renewal: true when the claim is still this attempt's. */
  async #renew(): Promise<boolean> {
    const sentAt = performance.now();
    const { rowCount } = await this.#pool.query(
      idempotencyKeys.holdClaim(this.#ref, this.fence, this.#leaseMs),
    );
    if (rowCount === 0) {
      this.#lost ??=
        "this attempt's claim of the effect is gone (its lease ran out and another attempt may hold it, or it " +
        'was completed or given up): the effect was not run by this attempt';
      this.stop();
      return false;
    }
    this.#provenUntil = Math.max(this.#provenUntil, sentAt + this.#leaseMs / 2);
    return true;
  }
}
