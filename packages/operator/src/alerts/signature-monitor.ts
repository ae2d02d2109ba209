import type { Alerter } from './alerter.ts';

export interface SignatureFailureMonitorOptions {
  alerter: Pick<Alerter, 'notify'>;
  /** Alert when MORE than this many refusals fall within one window. */
  threshold: number;
  /** Default 60 s. */
  windowMs?: number;
}

export interface SignatureFailureMonitor {
  /** Counts one refused signature (`missing_signature`, `invalid_signature`, `timestamp_out_of_tolerance`). */
  record(provider: string): void;
  /** Reports the count of every window already alerted on, as it stands, and stops the window timers. */
  close(): void;
}

/** One provider's current window: it opens at a refusal and lasts `windowMs`. */
interface Window {
  start: number;
  count: number;
  /** The count reported so far (0 until the threshold is passed). */
  reported: number;
  timer?: NodeJS.Timeout;
}

/**
 * Counts refused signatures per provider in windows of `windowMs` (each opens at the first refusal after the last
 * one closed) and raises a `signature_failures` alert as soon as a window's count passes `threshold`; when that
 * window closes with more refusals than were reported, a second alert gives its total. So a burst of 100,000
 * refusals reports 100,000, not the threshold. A sudden jump usually means a secret was rotated at the provider
 * but not deployed here. Memory is one counter per provider, whatever the rate; `record` is cheap and never throws.
 *
 * @example
 * const monitor = createSignatureFailureMonitor({ alerter, threshold: 20, windowMs: 60_000 });
 * // in the receiver, when verify() throws a signature error:
 * monitor.record('stripe');
 * // on shutdown, before alerter.close():
 * monitor.close();
 */
export function createSignatureFailureMonitor(
  options: SignatureFailureMonitorOptions,
): SignatureFailureMonitor {
  const { alerter, threshold } = options;
  const windowMs = options.windowMs ?? 60_000;
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
  const windows = new Map<string, Window>();

  function report(provider: string, window: Window, complete: boolean): void {
    window.reported = window.count;
    alerter.notify({
      kind: 'signature_failures',
      provider,
      count: window.count,
      threshold,
      windowMs,
      since: new Date(window.start),
      complete,
    });
  }

  function end(provider: string, window: Window): void {
    clearTimeout(window.timer);
    if (windows.get(provider) === window) windows.delete(provider);
    if (window.reported > 0 && window.count > window.reported) report(provider, window, true);
  }

  return {
    record(provider: string): void {
      try {
        const now = Date.now();
        let window = windows.get(provider);
        if (window && now >= window.start + windowMs) {
          end(provider, window);
          window = undefined;
        }
        if (!window) {
          window = { start: now, count: 0, reported: 0 };
          windows.set(provider, window);
        }
        window.count++;
        if (window.reported === 0 && window.count > threshold) {
          report(provider, window, false);
          // The total goes out when the window closes, even if no refusal comes after it.
          const open = window;
          window.timer = setTimeout(() => end(provider, open), open.start + windowMs - now);
          window.timer.unref();
        }
      } catch {
        // Monitoring must never disturb the request that was refused.
      }
    },
    close(): void {
      for (const [provider, window] of windows) end(provider, window);
    },
  };
}
