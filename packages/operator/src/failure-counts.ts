import type pg from 'pg';
import * as failureCounts from './sql/failure-counts.ts';
import * as failureGroups from './sql/failure-groups.ts';
import { inTransaction } from '@webhook-inbox/inbox/transaction';

/** Deltas folded per transaction: a few hundred milliseconds of work at most, however far behind the fold is. */
const BATCH = 20_000;

/**
 * Moves the failure groups' count deltas into their totals (`sql/failure-counts.ts`), batch by batch, until fewer
 * than a batch are left or `maxBatches` ran; returns how many it folded. A read sums the totals and the deltas left,
 * so folding changes no count, only how many rows the next read sums. Every receiver calls it once a minute (the
 * inbox sampler); one fold runs at a time, and a call while another process folds returns 0 at once. The fold also
 * records the first failure of each failing group that has none yet (`recordFirstSeen`).
 *
 * @example
 * await foldFailureCounts(pool);
 */
export async function foldFailureCounts(pool: pg.Pool, maxBatches = 50): Promise<number> {
  let folded = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const taken = await inTransaction(pool, async (client) => {
      const [lock] = (await client.query<{ locked: boolean }>(failureCounts.tryFoldLock())).rows;
      if (!lock?.locked) return 0;
      if (batch === 0) await client.query(failureGroups.recordFirstSeen());
      const moved =
        (await client.query<{ taken: number }>(failureCounts.foldDeltas(BATCH))).rows[0]?.taken ?? 0;
      await client.query(failureCounts.deleteEmptyCounts());
      return moved;
    });
    folded += taken;
    if (taken < BATCH) break;
  }
  return folded;
}
