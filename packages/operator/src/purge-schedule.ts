import type pg from 'pg';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { z } from 'zod';
import { resolvePurgeOptions, type PurgeOptions } from './retention-options.ts';
import { systemPrincipal } from './access/roles.ts';
import { auditPurge } from './audit.ts';
import { purgeExpired, type PurgeResult } from './retention.ts';

/** The pg-boss queue of scheduled purges. */
export const PURGE_QUEUE = 'webhook-inbox-purge';

/** What a scheduled purge job carries: the retention settings, checked again when the job runs. */
export type PurgeJobData = Pick<
  PurgeOptions,
  'payloadDays' | 'keyDays' | 'historyDays' | 'auditDays' | 'batchSize'
>;

const purgeJobData = z.object({
  payloadDays: z.number().optional(),
  keyDays: z.number().optional(),
  historyDays: z.number().optional(),
  auditDays: z.number().optional(),
  batchSize: z.number().optional(),
});

export interface SchedulePurgeOptions extends PurgeJobData {
  /** Cron expression (pg-boss: 5 fields, minute precision). Default `17 3 * * *`: daily at 03:17. */
  cron?: string;
  /** Time zone of the cron expression. Default UTC. */
  tz?: string;
}

/**
 * Creates the purge queue and (re)sets its recurring schedule; idempotent, call it at every start of the worker.
 * pg-boss then sends one job to `PURGE_QUEUE` per occurrence, from whichever instance runs its scheduler (the
 * default, `schedule: true`), and a worker registered with `createPurgeHandler` runs it. The queue policy is
 * `exclusive`: a purge that is still running is never joined by a second one.
 *
 * @example
 * await schedulePurge(boss, { cron: '17 3 * * *', payloadDays: 30, keyDays: 90 });
 * await boss.work(PURGE_QUEUE, createPurgeHandler(pool, { logger }));
 */
export async function schedulePurge(boss: PgBoss, options: SchedulePurgeOptions = {}): Promise<void> {
  const { cron = '17 3 * * *', tz = 'UTC', ...data } = options;
  resolvePurgeOptions(data);
  await boss.createQueue(PURGE_QUEUE, {
    policy: 'exclusive',
    retryLimit: 2,
    retryDelay: 300,
    expireInSeconds: 3600,
  });
  await boss.schedule(PURGE_QUEUE, cron, data, { tz });
}

/**
 * The `boss.work(PURGE_QUEUE, ...)` handler: runs `purgeExpired` with each job's settings, stops early when
 * pg-boss aborts the job (shutdown, expiry), logs and returns the results (stored as the job's output). A job
 * with invalid settings fails (and is retried) with the validation error.
 */
export function createPurgeHandler(
  pool: pg.Pool,
  {
    logger,
    onRun,
  }: {
    logger: Pick<Logger, 'info'>;
    /** Told of every run: its result, or the error it failed with (metrics). */
    onRun?: (run: { result: PurgeResult } | { error: unknown }) => void;
  },
): (jobs: Job<PurgeJobData>[]) => Promise<PurgeResult[]> {
  return async (jobs) => {
    const results: PurgeResult[] = [];
    for (const job of jobs) {
      let result: PurgeResult;
      try {
        const data = purgeJobData.parse(job.data ?? {});
        result = await purgeExpired(pool, { ...data, signal: job.signal });
      } catch (error) {
        onRun?.({ error });
        throw error;
      }
      onRun?.({ result });
      await auditPurge(pool, systemPrincipal('retention'), { job: job.id, ...job.data }, result);
      logger.info({ job: job.id, ...result }, 'retention purge');
      results.push(result);
    }
    return results;
  };
}
