/**
 * The shortest `keyDays` allowed. An event key is what makes a redelivery a no-op: delete it and the next
 * delivery of that event is accepted as new and its effects run again. Stripe retries a failed delivery for up
 * to 3 days, and a Dashboard "resend" reaches back 15 days (30 for reconciliation through the Events API), so
 * anything under a week is refused outright, and the default (90) covers all of them.
 */
export const MIN_KEY_DAYS = 7;

/** The audit log keeps at least this many days (`audit_log_purge` refuses less). */
export const MIN_AUDIT_DAYS = 90;

/**
 * The shortest `payloadDays` allowed without `force`: the providers' retry window (Stripe retries for 3 days).
 * Within it an event that went `dead` is the one an operator replays once the cause is fixed, and a replay of an
 * event whose payload is gone cannot run its effects. A shorter age is almost always a slip (`1ms` for `1m`, `30m`
 * for `30d`) that would drop every payload at once.
 */
export const MIN_PAYLOAD_DAYS = 3;

/**
 * Purge options that would destroy what should be kept: `code` says which rule, the message why. Thrown before
 * anything is touched.
 * - `below_retry_window`: `payloadDays` under `MIN_PAYLOAD_DAYS`; `force: true` purges anyway.
 * - `invalid_option`: anything else (a `keyDays` under `MIN_KEY_DAYS`, which `force` does not override, a
 *   non-number, a batch size out of range).
 * A `RangeError`, so a caller that only knows "bad options" can catch that.
 */
export class RetentionOptionError extends RangeError {
  readonly code: 'below_retry_window' | 'invalid_option';
  constructor(code: RetentionOptionError['code'], message: string) {
    super(message);
    this.name = 'RetentionOptionError';
    this.code = code;
  }
}

export interface PurgeOptions {
  /**
   * Drop the payloads of finished events received longer ago than this, a whole UTC day at a time: a day's payloads
   * go once all of that day is older than this (so a payload is kept up to a day longer). Default 30.
   */
  payloadDays?: number;
  /**
   * Delete finished events (key and effect ledger; the payload goes with its day) received longer ago than this.
   * Default 90, minimum 7.
   */
  keyDays?: number;
  /**
   * Delete the console overview's history (`webhook_delivery_counts`, `inbox_samples`) older than this. Default 30,
   * minimum 1 (the overview charts the last day).
   */
  historyDays?: number;
  /**
   * Delete audit-log rows older than this, through `audit_log_purge` (the only way past the table's append-only
   * trigger). Default 365, minimum 90 (`MIN_AUDIT_DAYS`, which the function enforces as well).
   */
  auditDays?: number;
  /**
   * Rows per statement at most (each statement is its own short transaction). Default 1000, at most 10 000. The
   * size actually used adapts to keep each batch well under `maxBatchMs`.
   */
  batchSize?: number;
  /** The reference time for both cutoffs. Default: now. */
  now?: Date;
  /**
   * The longest one batch may run (its `statement_timeout`), lock waits included; beyond it the batch is cancelled,
   * which releases its rows, and retried at half the size, down to one row (a batch of one row timed out five
   * times in a row stops the run: another transaction holds it). This
   * bounds how long an `INSERT ... ON CONFLICT` of a key being purged can wait, even on a loaded machine where a
   * batch of fixed size would run long. Default 50 ms.
   */
  maxBatchMs?: number;
  /** Stops between batches (graceful shutdown); the result then says `complete: false`. */
  signal?: AbortSignal;
  /** Allow a `payloadDays` under `MIN_PAYLOAD_DAYS` (the retry window). `keyDays` has no override. */
  force?: boolean;
  /** Count what a purge would change now, change nothing (`dryRun: true` in the result, `batches: 0`). */
  dryRun?: boolean;
}

interface ResolvedPurgeOptions {
  payloadDays: number;
  keyDays: number;
  historyDays: number;
  auditDays: number;
  batchSize: number;
  maxBatchMs: number;
}

/**
 * Checks purge options and fills in the defaults; throws a `RetentionOptionError` saying what is wrong. Run by
 * `purgeExpired` and by `schedulePurge` (so a bad schedule is refused when it is set, not at 3 a.m.).
 */
export function resolvePurgeOptions(options: PurgeOptions = {}): ResolvedPurgeOptions {
  const { payloadDays = 30, keyDays = 90, historyDays = 30, auditDays = 365 } = options;
  const { batchSize = 1000, maxBatchMs = 50 } = options;
  const invalid = (message: string) => new RetentionOptionError('invalid_option', `retention: ${message}`);
  if (!Number.isFinite(payloadDays) || payloadDays <= 0) {
    throw invalid(`payloadDays must be a positive number of days, got ${payloadDays}`);
  }
  if (payloadDays < MIN_PAYLOAD_DAYS && options.force !== true) {
    throw new RetentionOptionError(
      'below_retry_window',
      `retention: payloadDays must be at least ${MIN_PAYLOAD_DAYS} (the providers' retry window), got ` +
        `${+payloadDays.toPrecision(3)}: it would drop the payloads of every finished event older than ` +
        `that, dead ones an operator may still replay among them. Set \`force\` to purge anyway.`,
    );
  }
  if (!Number.isFinite(keyDays) || keyDays < MIN_KEY_DAYS) {
    throw invalid(
      `keyDays must be at least ${MIN_KEY_DAYS}, got ${keyDays}. An event key deleted while its ` +
        `provider may still redeliver it (Stripe retries for 3 days; a Dashboard resend reaches back 15 days) ` +
        `lets that delivery in as a new event and runs its side effects twice.`,
    );
  }
  if (!Number.isFinite(historyDays) || historyDays < 1) {
    throw invalid(`historyDays must be at least 1 (the console charts the last day), got ${historyDays}`);
  }
  if (!Number.isFinite(auditDays) || auditDays < MIN_AUDIT_DAYS) {
    throw invalid(
      `auditDays must be at least ${MIN_AUDIT_DAYS} (the audit trail's minimum), got ${auditDays}`,
    );
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw invalid(`batchSize must be an integer from 1 to 10000, got ${batchSize}`);
  }
  if (!Number.isInteger(maxBatchMs) || maxBatchMs < 10) {
    throw invalid(`maxBatchMs must be an integer of at least 10, got ${maxBatchMs}`);
  }
  return { payloadDays, keyDays, historyDays, auditDays, batchSize, maxBatchMs };
}
