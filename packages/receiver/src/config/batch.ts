import { boundedNumber } from '@webhook-inbox/env';

// How large one request to a batching source may be: how many events it carries, and how many bytes its body
// holds. Part of the receiver's environment (env.ts spreads `batchFields` into its schema).

/** The limits of one request to a source whose requests carry several events (SendGrid, Adyen, `batch:`). */
export interface BatchLimits {
  /** Events one request may carry; more: 413 `batch_too_large`, nothing recorded. */
  maxItems: number;
  /** Bytes a batching source's body may hold (other sources: `WEBHOOK_MAX_BODY_BYTES`); more: 413. */
  maxBodyBytes: number;
}

const MIB = 1024 * 1024;

/**
 * 10,000 items record in one transaction in a few seconds on a busy two-core machine (docs/performance.md); 8 MiB
 * holds 10,000 items of 800 bytes, more than a SendGrid or HubSpot event takes.
 */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxItems: 10_000, maxBodyBytes: 8 * MIB };

export const batchFields = {
  BATCH_MAX_ITEMS: boundedNumber(1, 100_000, DEFAULT_BATCH_LIMITS.maxItems),
  WEBHOOK_MAX_BATCH_BODY_BYTES: boundedNumber(1, 64 * MIB, DEFAULT_BATCH_LIMITS.maxBodyBytes),
};

/** The batch limits of the parsed environment; a batch body that can never fit the body budget is an issue. */
export function batchLimits(
  e: { BATCH_MAX_ITEMS: number; WEBHOOK_MAX_BATCH_BODY_BYTES: number; WEBHOOK_BODY_BUDGET_BYTES: number },
  issues: string[],
): BatchLimits {
  // Past the budget is a 503, which the sender retries: a body within its limit must fit an empty budget.
  if (e.WEBHOOK_BODY_BUDGET_BYTES < e.WEBHOOK_MAX_BATCH_BODY_BYTES) {
    issues.push('WEBHOOK_BODY_BUDGET_BYTES must be at least WEBHOOK_MAX_BATCH_BODY_BYTES');
  }
  return { maxItems: e.BATCH_MAX_ITEMS, maxBodyBytes: e.WEBHOOK_MAX_BATCH_BODY_BYTES };
}
