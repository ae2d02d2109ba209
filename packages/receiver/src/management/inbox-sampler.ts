import { errorFields } from '@webhook-inbox/inbox/error-text';
import { foldFailureCounts } from '@webhook-inbox/operator/failure-counts';
import { readInboxStats } from '@webhook-inbox/operator/inbox-stats';
import { EVENTS_QUEUE } from '@webhook-inbox/inbox/queue';
import { effectRuns } from '@webhook-inbox/inbox/sql';
import { inboxSamples } from '@webhook-inbox/operator/sql';
import type pg from 'pg';
import type { Logger } from '../logger.ts';

interface InboxSampler {
  /** Samples now, unless this minute has its sample (tests; the timer calls it too). */
  sample(): Promise<void>;
  /** Stops the timer and waits for a sample being taken. */
  stop(): Promise<void>;
}

/**
 * Writes the inbox's state once a minute into `inbox_samples` (the console overview's backlog, failing and dead
 * charts): at start, then every `intervalMs` (default 20 s, so no minute is skipped), it asks whether the
 * database's current minute has its row, and if not reads the metrics' own counts (`readInboxStats`: events by
 * unfinished status, the oldest unprocessed event's age, live jobs) and the failing effects by name, and inserts
 * the row. Every receiver runs one; the first row of a minute wins (`ON CONFLICT DO NOTHING`), so the reads run
 * about once a minute whatever the number of receivers. Then it folds the failure groups' count deltas
 * (`foldFailureCounts`), so the failures page and the overview sum a minute of changes at most. A failure is
 * logged once per run of failures; the minute is then missing from the charts, and the next minute folds.
 */
export function startInboxSampler(options: {
  pool: pg.Pool;
  logger: Logger;
  intervalMs?: number;
}): InboxSampler {
  const { pool, logger } = options;
  let failing = false;
  let running: Promise<void> | undefined;

  const take = async () => {
    try {
      const sampled = await pool.query<{ sampled: boolean }>(inboxSamples.currentMinuteSampled());
      if (sampled.rows[0]?.sampled) return;
      const stats = await readInboxStats(pool);
      const failingEffects = await pool.query<{ byEffect: Record<string, number> }>(
        effectRuns.countFailingByEffect(),
      );
      const jobs = (state: string) =>
        stats.jobs.find((j) => j.queue === EVENTS_QUEUE && j.state === state)?.count ?? 0;
      await pool.query(
        inboxSamples.insertInboxSample({
          eventsReceived: stats.events.received,
          eventsProcessing: stats.events.processing,
          eventsFailed: stats.events.failed,
          eventsDead: stats.events.dead,
          oldestUnprocessedSeconds: stats.oldestUnprocessedAgeSeconds,
          jobsCreated: jobs('created'),
          jobsRetry: jobs('retry'),
          jobsActive: jobs('active'),
          failingEffects: failingEffects.rows[0]?.byEffect ?? {},
        }),
      );
      await foldFailureCounts(pool);
      failing = false;
    } catch (error) {
      if (!failing)
        logger.warn(
          { err: errorFields(error) },
          'could not sample the inbox for the overview, or fold its failure counts',
        );
      failing = true;
    }
  };
  const sample = () =>
    (running ??= take().finally(() => {
      running = undefined;
    }));

  void sample();
  const timer = setInterval(() => void sample(), options.intervalMs ?? 20_000);
  timer.unref();
  return {
    sample,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
