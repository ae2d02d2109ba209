/**
 * Runs a synchronous call and measures the CPU time this process spent on it (user + system), for tests that
 * bound a pure function's work (no regular expression that backtracks over a megabyte, no quadratic walk).
 * Unlike wall time it does not grow while a busy machine keeps the process waiting for a core, so a bound on it
 * holds on a loaded CI machine and still tells linear work from a blow-up.
 */
export function cpuTime<T>(call: () => T): { value: T; ms: number } {
  const before = process.cpuUsage();
  const value = call();
  const { user, system } = process.cpuUsage(before);
  return { value, ms: (user + system) / 1000 };
}
