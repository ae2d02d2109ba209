/**
 * The destinations benchmark's baseline: webhook forwarding written the way a team would without the inbox, as
 * pg-boss jobs each carrying the body, each worked by one `fetch` POST signed the same way (Standard Webhooks,
 * the same secret), fetched exactly as a destination's queue is (two at a time, bursting while fetches come back
 * full, the same concurrency). What it lacks is the ledger: no claim before the request, no attempt recorded, no
 * mark after the 2xx, no breaker, no rate limit; a retried job sends again.
 */
import type { PgBoss } from 'pg-boss';
import { signDelivery } from '../../packages/inbox/src/destinations/signature.ts';
import { startBaselineBoss } from './raw-boss.ts';

export const NAIVE_DELIVERY_QUEUE = 'bench-naive-delivery';

export interface NaiveDeliveryJob {
  id: string;
  body: string;
}

export interface NaiveDelivery {
  boss: PgBoss;
  stop(): Promise<void>;
}

/** Starts the baseline's worker in this process, POSTing to `url`. */
export async function startNaiveDelivery(
  databaseUrl: string,
  url: string,
  secret: Buffer,
  concurrency: number,
): Promise<NaiveDelivery> {
  const boss = await startBaselineBoss(databaseUrl, NAIVE_DELIVERY_QUEUE, concurrency + 2);
  await boss.work<NaiveDeliveryJob>(
    NAIVE_DELIVERY_QUEUE,
    { batchSize: 2, burstWhenBatchFull: true, localConcurrency: concurrency, pollingIntervalSeconds: 1 },
    async (jobs) => {
      for (const job of jobs) {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'naive',
            ...signDelivery(job.data.id, new Date(), job.data.body, [secret]),
          },
          body: job.data.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(15_000),
        });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
      }
    },
  );
  return { boss, stop: () => boss.stop({ graceful: true, timeout: 5_000, close: true }) };
}
