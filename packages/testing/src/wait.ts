export interface WaitOptions {
  /** Give up after this many milliseconds. */
  timeout?: number;
  /** Re-check every this many milliseconds. */
  interval?: number;
  /** Says what was awaited, for the error. */
  message?: string;
}

/**
 * Re-checks `condition` until it returns something other than `undefined`/`false`, then returns it; throws
 * after the deadline. Tests wait on a condition, never on a fixed sleep.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  { timeout = 10_000, interval = 25, message }: WaitOptions = {},
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const what = message ?? condition.toString();
      throw new Error(`timed out after ${timeout} ms waiting for: ${what}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
