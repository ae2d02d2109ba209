import { errorFields } from '@webhook-inbox/inbox/error-text';
import { readInboxStats, type InboxStats } from '@webhook-inbox/operator/inbox-stats';
import { DEAD_LETTER_QUEUE, EVENTS_QUEUE } from '@webhook-inbox/inbox/queue';
import type pg from 'pg';
import { Gauge, type Registry } from 'prom-client';
import { cachedFor } from './cached.ts';
import type { Logger } from '../logger.ts';

interface InboxMetricsOptions {
  pool: pg.Pool;
  logger: Logger;
  /** How long one read of the database is reused; scrapes in the meantime share it. Default 5 s. */
  maxAgeMs?: number;
}

// Reported even when empty, so a rule on them has a series to read (absent is not the same as zero).
const ALWAYS_REPORTED_QUEUES = [EVENTS_QUEUE, DEAD_LETTER_QUEUE];
const LIVE_STATES = ['created', 'retry', 'active'] as const;

/**
 * The inbox's state as gauges, read from the database at scrape time: events by unfinished status (and by
 * consumer group), the age of the oldest event still to process, live pg-boss jobs per queue and state. One read
 * (three indexed statements, see
 * `readInboxStats`) per `maxAgeMs` at most, shared by every gauge and every concurrent scrape. A failed read
 * leaves these gauges out of that scrape and sets `webhook_inbox_stats_up` to 0; the rest of `/metrics` answers.
 */
export function registerInboxMetrics(registry: Registry, options: InboxMetricsOptions): void {
  const { pool, logger } = options;
  const read = cachedFor(options.maxAgeMs ?? 5_000, () =>
    readInboxStats(pool).catch((error: unknown): undefined => {
      logger.warn({ err: errorFields(error) }, 'metrics: could not read the inbox stats');
      return undefined;
    }),
  );

  new Gauge({
    name: 'webhook_inbox_stats_up',
    help: "1 when the last read of the database for the inbox's gauges succeeded, 0 when it failed.",
    registers: [registry],
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  gaugeOf(registry, read, {
    name: 'webhook_events',
    help: 'Events by status, every status but processed (its rate is webhook_events_settled_total).',
    labelNames: ['status'],
    set(gauge, stats) {
      for (const [status, count] of Object.entries(stats.events)) gauge.set({ status }, count);
    },
  });
  gaugeOf(registry, read, {
    name: 'webhook_event_groups',
    help: 'Events by consumer group (other than the default, whose counts are webhook_events) and status, every status but processed.',
    labelNames: ['group', 'status'],
    set(gauge, stats) {
      for (const { group, status, count } of stats.groups) gauge.set({ group, status }, count);
    },
  });
  gaugeOf(registry, read, {
    name: 'webhook_oldest_unprocessed_event_age_seconds',
    help: 'Age of the oldest event still to process (received, processing or failed), seconds; 0 when none.',
    labelNames: [],
    set(gauge, stats) {
      gauge.set(stats.oldestUnprocessedAgeSeconds);
    },
  });
  gaugeOf(registry, read, {
    name: 'webhook_queue_jobs',
    help: 'Live pg-boss jobs by queue and state: created (waiting), retry (waiting for a retry), active.',
    labelNames: ['queue', 'state'],
    set(gauge, stats) {
      for (const queue of ALWAYS_REPORTED_QUEUES) {
        for (const state of LIVE_STATES) gauge.set({ queue, state }, 0);
      }
      for (const { queue, state, count } of stats.jobs) gauge.set({ queue, state }, count);
    },
  });
}

function gaugeOf(
  registry: Registry,
  read: () => Promise<InboxStats | undefined>,
  spec: {
    name: string;
    help: string;
    labelNames: string[];
    set: (gauge: Gauge, stats: InboxStats) => void;
  },
): void {
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      const stats = await read();
      if (stats) spec.set(this, stats);
    },
  });
}
