import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A destination's rate limit in this process: deliveries start at most `perSecond` a second, evenly spaced (no
 * burst), whatever the concurrency. Undefined: no limit.
 */
export class RateLimiter {
  readonly #intervalMs: number;
  #next = 0;

  constructor(perSecond: number | undefined) {
    this.#intervalMs = perSecond ? 1000 / perSecond : 0;
  }

  /** Resolves when the next delivery may start. */
  async take(): Promise<void> {
    if (this.#intervalMs === 0) return;
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#intervalMs;
    if (at > now) await sleep(at - now);
  }
}
