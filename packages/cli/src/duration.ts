import { UsageError } from './errors.ts';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `90m`, `24h`, `3d`, `2w` → milliseconds. */
export function parseDurationMs(text: string): number {
  const match = /^(\d+)([smhdw])$/.exec(text.trim());
  if (!match) throw new UsageError(`"${text}" is not a duration like 90m, 24h, 3d or 2w`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** `--since 24h` → the time 24 hours ago; an ISO date is taken as is. */
export function sinceDate(text: string, now = new Date()): Date {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) throw new UsageError(`"${text}" is not a valid date`);
    return date;
  }
  return new Date(now.getTime() - parseDurationMs(text));
}
