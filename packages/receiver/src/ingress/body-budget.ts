/**
 * The bytes of request bodies the receiver holds at once, across every request: each body is buffered whole
 * before its signature can be checked, so without a global bound a few hundred slow senders of 1 MiB bodies
 * hold hundreds of MiB. A request takes its bytes before reading them (its declared Content-Length, or chunk
 * by chunk when chunked) and gives them back when its response is done.
 *
 * When the budget is full, bodies still arriving (for at least `evictAfterMs`) are cut off, oldest first, to
 * make room for the new one: a provider sends a whole webhook in milliseconds, so the oldest body still
 * arriving is the slowest sender, and letting it keep its bytes would let a few hundred slow senders lock out
 * every fast one. Only when that cannot make room (the budget is held by bodies already complete, whose
 * requests are being answered) is the new body refused: 503, the sender retries.
 */
interface BodyBudgetOptions {
  /** Bytes all bodies together may hold. */
  limitBytes: number;
  /** A body still being read after this long may be cut off to make room for a new one. */
  evictAfterMs: number;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

export interface BodyLease {
  /**
   * Takes `bytes` more for this body, cutting off older slow reads if needed; false (nothing taken) when the
   * budget cannot make room.
   */
  take(bytes: number): boolean;
  /** Called (once) if this body is cut off to make room for a newer one; its bytes are already given back. */
  onEvicted(listener: () => void): void;
  /** The body is complete: newer bodies cannot cut it off (its request is being answered). */
  doneReading(): void;
  /** Gives every byte back. Idempotent. */
  release(): void;
}

export interface BodyBudget {
  readonly limitBytes: number;
  /** Bytes taken right now. */
  usedBytes(): number;
  /** One body's account, opened when its request starts. */
  open(): BodyLease;
}

interface Account {
  bytes: number;
  readonly openedAt: number;
  released: boolean;
  onEvicted: () => void;
}

export function createBodyBudget({
  limitBytes,
  evictAfterMs,
  now = () => performance.now(),
}: BodyBudgetOptions): BodyBudget {
  let used = 0;
  // Accounts still reading, oldest first (a Set keeps insertion order).
  const reading = new Set<Account>();

  const giveBack = (account: Account) => {
    if (account.released) return;
    account.released = true;
    reading.delete(account);
    used -= account.bytes;
    account.bytes = 0;
  };

  // Cuts off the oldest reads old enough, but only if that makes enough room: never for nothing.
  const makeRoom = (bytes: number, requester: Account): boolean => {
    let missing = used + bytes - limitBytes;
    if (missing <= 0) return true;
    const cutoff = now() - evictAfterMs;
    const victims: Account[] = [];
    for (const account of reading) {
      if (account.openedAt > cutoff) break; // Newer ones follow: none of them is old enough either.
      if (account === requester || account.bytes === 0) continue;
      victims.push(account);
      missing -= account.bytes;
      if (missing <= 0) break;
    }
    if (missing > 0) return false;
    for (const account of victims) {
      giveBack(account);
      account.onEvicted();
    }
    return true;
  };

  return {
    limitBytes,
    usedBytes: () => used,
    open() {
      const account: Account = { bytes: 0, openedAt: now(), released: false, onEvicted: () => {} };
      reading.add(account);
      return {
        take(bytes) {
          if (account.released || !makeRoom(bytes, account)) return false;
          account.bytes += bytes;
          used += bytes;
          return true;
        },
        onEvicted: (listener) => void (account.onEvicted = listener),
        doneReading: () => void reading.delete(account),
        release: () => giveBack(account),
      };
    },
  };
}
