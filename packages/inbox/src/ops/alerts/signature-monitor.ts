import type { Alerter } from './delivery.ts';

export interface SignatureFailureMonitorOptions {
  alerter: Pick<Alerter, 'notify'>;
  /** Alert when MORE than this many refusals fall within one window. */
  threshold: number;
  /** Default 60 s. */
  windowMs?: number;
  /** Injected clock (ms since epoch), for tests. */
  now?: () => number;
}

export interface SignatureFailureMonitor {
  /** Counts one refused signature (`missing_signature`, `invalid_signature`, `timestamp_out_of_tolerance`). */
  record(provider: string): void;
}

/**
 * Watches refused signatures per provider over a sliding window and raises one `signature_failures` alert when
 * they exceed `threshold`, then stays quiet for that provider for one window. A sudden jump usually means a
 * secret was rotated at the provider but not deployed here. O(threshold) memory per provider; `record` is cheap
 * and never throws.
 *
 * @example
 * const monitor = createSignatureFailureMonitor({ alerter, threshold: 20, windowMs: 60_000 });
 * // in the receiver, when verify() throws a signature error:
 * monitor.record('stripe');
 */
export function createSignatureFailureMonitor(
  options: SignatureFailureMonitorOptions,
): SignatureFailureMonitor {
  const { alerter, threshold } = options;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw new RangeError(
      `createSignatureFailureMonitor: threshold must be an integer >= 0, got ${threshold}`,
    );
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError(
      `createSignatureFailureMonitor: windowMs must be a positive number, got ${windowMs}`,
    );
  }
  // Per provider: the times of the latest threshold + 1 refusals (all that is needed to know "more than
  // threshold within the window"), and until when the provider is quiet after an alert.
  const state = new Map<string, { times: number[]; quietUntil: number }>();

  return {
    record(provider: string): void {
      try {
        const t = now();
        let entry = state.get(provider);
        if (!entry) {
          entry = { times: [], quietUntil: 0 };
          state.set(provider, entry);
        }
        const { times } = entry;
        times.push(t);
        if (times.length > threshold + 1) times.shift();
        while (times.length > 0 && (times[0] ?? t) <= t - windowMs) times.shift();
        if (times.length > threshold && t >= entry.quietUntil) {
          entry.quietUntil = t + windowMs;
          alerter.notify({ kind: 'signature_failures', provider, count: times.length, threshold, windowMs });
        }
      } catch {
        // Monitoring must never disturb the request that was refused.
      }
    },
  };
}
