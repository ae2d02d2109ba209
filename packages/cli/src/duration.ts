import { sinceDuration } from '@webhook-inbox/inbox';
import { UsageError } from './errors.ts';

/** `--since 24h` → the time 24 hours ago; an ISO date is taken as is. Bad input is a usage error (exit 2). */
export function sinceDate(text: string, now = new Date()): Date {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) throw new UsageError(`--since: "${text}" is not a valid date`);
    return date;
  }
  try {
    return sinceDuration(text, now);
  } catch (error) {
    throw new UsageError(`--since: ${error instanceof Error ? error.message : String(error)}`);
  }
}
