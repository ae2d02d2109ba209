/**
 * The marks of the external effects claimed on one connection (a round's), sent together: a mark goes out at the
 * end of the event loop's turn in which its effect returned, with every other mark ready by then, as one
 * statement (`idempotencyKeys.completeExternalEffects`); marks that become ready while a statement is in flight go out
 * together as soon as it is answered. An effect's mark waits for at most the round trip of the statement before
 * it, never for another effect's call: the window in which a crash means "done but not known to be done" stays one
 * or two round trips, and a round of 50 emails is marked in a few statements instead of 50.
 */
import type pg from 'pg';
import * as idempotencyKeys from '../sql/idempotency-keys.ts';
import type { EffectRef } from '../sql/idempotency-keys.ts';

interface PendingMark extends idempotencyKeys.ClaimedEffect {
  resolve(marked: boolean): void;
  reject(error: unknown): void;
}

export class MarkQueue {
  readonly client: pg.PoolClient;
  #pending: PendingMark[] = [];
  #scheduled = false;
  #inFlight = false;

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  /**
   * Resolves true when the effect's ledger row is marked completed, false when another attempt holds the claim
   * (nothing is marked); rejects with the statement's error (every mark of that statement does).
   */
  mark(ref: EffectRef, fence: idempotencyKeys.ClaimFence): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#pending.push({ ref, fence, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#send();
    });
  }

  async #send(): Promise<void> {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    this.#inFlight = true;
    try {
      const { rows } = await this.client.query<idempotencyKeys.MarkedRow>(
        idempotencyKeys.completeExternalEffects(batch),
      );
      const marked = new Set(rows.map((row) => markKey(row.provider, row.event_id, row.effect)));
      for (const mark of batch) {
        mark.resolve(marked.has(markKey(mark.ref.provider, mark.ref.eventId, mark.ref.effect)));
      }
    } catch (error) {
      for (const mark of batch) mark.reject(error);
    } finally {
      this.#inFlight = false;
      if (this.#pending.length > 0) this.#schedule();
    }
  }
}

function markKey(provider: string, eventId: string, effect: string): string {
  return `${provider}\u0000${eventId}\u0000${effect}`;
}
