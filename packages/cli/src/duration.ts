import { parseSince } from '@webhook-inbox/operator/duration';
import { UsageError } from './errors.ts';

/** `--since 24h` → the time 24 hours ago; an ISO date is taken as is. Bad input is a usage error (exit 2). */
export function sinceDate(text: string, now = new Date()): Date {
  try {
    return parseSince(text, now);
  } catch (error) {
    throw new UsageError(`--since: ${error instanceof Error ? error.message : String(error)}`);
  }
}
