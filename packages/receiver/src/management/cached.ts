/**
 * Wraps `load` so it runs at most once per `maxAgeMs`: calls in the meantime, concurrent ones included, share the
 * last result (or the call still running). `load` should not reject: a rejection is shared like a result.
 *
 * @example
 * const readiness = cachedFor(1_000, () => pool.query('select 1').then(() => true, () => false));
 */
export function cachedFor<T>(maxAgeMs: number, load: () => Promise<T>): () => Promise<T> {
  let last: { at: number; result: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= maxAgeMs) last = { at: now, result: load() };
    return last.result;
  };
}
