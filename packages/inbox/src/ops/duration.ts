const UNIT_MS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;

/**
 * Parses a CLI duration such as `90m`, `24h`, `3d`, `1w` or `1d12h` into milliseconds. Units: `ms`, `s`, `m`
 * (minutes), `h`, `d`, `w`. Throws a `RangeError` that says what is accepted for anything else, including 0.
 *
 * @example
 * parseDuration('3d') // 259_200_000
 * parseDuration('1h30m') // 5_400_000
 */
export function parseDuration(text: string): number {
  const compact = text.trim().toLowerCase().replace(/\s+/g, '');
  if (!WHOLE.test(compact)) {
    throw new RangeError(
      `invalid duration "${text}": expected a number and a unit, e.g. 90m, 24h, 3d or 1d12h (units: ms, s, m, h, d, w)`,
    );
  }
  let total = 0;
  for (const [, amount, unit] of compact.matchAll(PART)) {
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  }
  if (!(total > 0) || !Number.isFinite(total)) {
    throw new RangeError(`invalid duration "${text}": must be longer than zero`);
  }
  return total;
}

/**
 * The moment `duration` before `now`: what `--since 3d` means. Throws a `RangeError` for what `parseDuration`
 * refuses, and for a duration too long to count back (`99999999999999999999w`).
 *
 * @example
 * sinceDuration('24h') // a Date 24 hours ago
 */
export function sinceDuration(duration: string, now: Date = new Date()): Date {
  const since = new Date(now.getTime() - parseDuration(duration));
  if (Number.isNaN(since.getTime())) {
    throw new RangeError(`invalid duration "${duration}": reaches back further than any date`);
  }
  return since;
}
