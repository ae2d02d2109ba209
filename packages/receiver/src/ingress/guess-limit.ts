import type { ThrottleVerdict } from '@webhook-inbox/operator/access/throttle';

// A source that authenticates by comparing a presented secret (an API key, Basic credentials, GitLab's token)
// answers each wrong one with a refusal, so each request is one guess of the secret. This bounds the guesses per
// client and source, in memory: the happy path costs one Map lookup, and no database round trip is added to any
// request. Per process: N receivers allow N times the guesses, still a handful per window.

interface GuessLimitOptions {
  /** Refused attempts a client may make at one source in a window; then every attempt is refused unchecked. */
  maxFailures: number;
  /** How long a window lasts from its first refusal. */
  windowSeconds: number;
  /** How many (source, client) windows are kept; beyond it the ended ones go, then the oldest. */
  maxEntries: number;
}

/** 10 wrong secrets per client and source in 15 minutes; 10,000 clients kept (under 2 MB). */
export const SOURCE_GUESS_LIMIT: GuessLimitOptions = {
  maxFailures: 10,
  windowSeconds: 900,
  maxEntries: 10_000,
};

export interface GuessLimit {
  /** Before the secret is checked: refused (429) while `key` has used up its refusals, else allowed. */
  check(key: string, nowMs: number): ThrottleVerdict;
  /** A wrong secret from `key`: counted. */
  refused(key: string, nowMs: number): void;
}

/**
 * An in-memory count of refused secrets per key (`<source> <client>`, the client a `throttleKey`, so an IPv6 /64
 * counts as one). A throttled client is refused whether its secret is right or wrong, so guesses past the limit
 * teach nothing.
 *
 * @example
 * const guesses = createGuessLimit(SOURCE_GUESS_LIMIT);
 * const verdict = guesses.check(`graph ${throttleKey(address)}`, Date.now());
 */
export function createGuessLimit(options: GuessLimitOptions): GuessLimit {
  const windows = new Map<string, { failures: number; endsAt: number }>();
  const windowMs = options.windowSeconds * 1000;

  /** Room for one more window: the ended ones go first, then the oldest. */
  const makeRoom = (nowMs: number) => {
    if (windows.size < options.maxEntries) return;
    for (const [key, window] of windows) if (window.endsAt <= nowMs) windows.delete(key);
    if (windows.size >= options.maxEntries) windows.delete(windows.keys().next().value as string);
  };

  return {
    check(key, nowMs) {
      const window = windows.get(key);
      if (window === undefined || window.failures < options.maxFailures) return { allowed: true };
      if (window.endsAt <= nowMs) {
        windows.delete(key);
        return { allowed: true };
      }
      return { allowed: false, retryAfterSeconds: Math.ceil((window.endsAt - nowMs) / 1000) };
    },
    refused(key, nowMs) {
      const window = windows.get(key);
      if (window !== undefined && window.endsAt > nowMs) {
        window.failures += 1;
        return;
      }
      windows.delete(key);
      makeRoom(nowMs);
      windows.set(key, { failures: 1, endsAt: nowMs + windowMs });
    },
  };
}
