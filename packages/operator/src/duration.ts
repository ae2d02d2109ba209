const UNIT_MS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

/** The longest duration a JavaScript Date can span (its whole range is ±8.64e15 ms around 1970). */
const MAX_DURATION_MS = 8.64e15;
/** No event is older than the Unix epoch; PostgreSQL and JavaScript both represent every moment after it. */
const EARLIEST_MS = 0;

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
  if (!(total > 0)) {
    throw new RangeError(`invalid duration "${text}": must be longer than zero`);
  }
  if (!(total <= MAX_DURATION_MS)) {
    throw new RangeError(`invalid duration "${text}": longer than any date can reach`);
  }
  return total;
}

/**
 * The moment `duration` before `now`: what `--since 3d` means. Throws a `RangeError` for a duration that
 * reaches back before 1970-01-01 (no event is that old).
 *
 * @example
 * sinceDuration('24h') // a Date 24 hours ago
 */
export function sinceDuration(duration: string, now: Date = new Date()): Date {
  const since = now.getTime() - parseDuration(duration);
  if (!(since >= EARLIEST_MS)) {
    throw new RangeError(
      `invalid duration "${duration}": reaches back before 1970-01-01, and no event is that old`,
    );
  }
  return new Date(since);
}

/**
 * A `since` as operators write it: an ISO date or time (`2026-11-30`, `2026-11-30T08:00:00Z`) taken as is, or
 * a duration counted back from `now` (`24h`, `3d`). Throws a `RangeError` saying what is accepted for anything
 * else, including a date that does not exist or lies before 1970.
 *
 * @example
 * parseSince('2026-11-30') // 2026-11-30T00:00:00.000Z
 * parseSince('3d') // three days ago
 */
export function parseSince(text: string, now: Date = new Date()): Date {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const date = new Date(text);
    if (!(date.getTime() >= EARLIEST_MS)) {
      throw new RangeError(`invalid time "${text}": expected an ISO date or time from 1970 on`);
    }
    return date;
  }
  return sinceDuration(text, now);
}
