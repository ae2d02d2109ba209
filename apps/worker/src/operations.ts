import { createPool } from '@webhook-inbox/db';
import { systemPrincipal } from '@webhook-inbox/operator/access/roles';
import {
  createOperationsBoss,
  DEFAULT_GROUP,
  ensureQueues,
  getEvent,
  loadEffectLookup,
  type DeadEvent,
} from '@webhook-inbox/inbox';
import {
  auditReconcile,
  createPurgeHandler,
  createRecordedAlerter,
  PURGE_QUEUE,
  schedulePurge,
  sinceDuration,
  startDestinationMonitor,
  type Alerter,
  type AlerterStats,
  type PurgeResult,
} from '@webhook-inbox/operator';
import { reconcileStripe } from '@webhook-inbox/operator/reconcile';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { WorkerConfig } from './env.ts';
import type { Logger } from './logger.ts';

/** The queue the reconciliation schedule feeds. */
const RECONCILE_QUEUE = 'webhook-inbox-reconcile-stripe';

/**
 * What the worker does besides effects: alerts on dead events and on its group's destinations, the retention purge and the Stripe
 * reconciliation on pg-boss schedules. Kept apart from the effect runner so none of it can slow an effect.
 */
export interface Operations {
  /** For `startWorker`'s onDead: alerts per failed effect (or for the event), never throws, never blocks. */
  onDead(event: DeadEvent): void;
  /** The alerter's running totals (metrics). */
  alertStats(): AlerterStats;
  /** The operations' own pool (alerts, the purge, the reconciliation, the destinations' gauges), ended by `stop`. */
  readonly pool: pg.Pool;
  stop(): Promise<void>;
}

interface OperationsHooks {
  /** Told of every retention run (metrics). */
  onRetentionRun?: (run: { result: PurgeResult } | { error: unknown }) => void;
}

export async function startOperations(
  config: WorkerConfig,
  logger: Logger,
  hooks: OperationsHooks = {},
): Promise<Operations> {
  const pool = createPool({
    connectionString: config.databaseUrl,
    pooler: config.databasePooler,
    max: 5,
    applicationName: 'webhook-inbox-worker-ops',
    onError: (error) => logger.warn({ err: error }, 'operations connection failed'),
  });
  // Each message is also recorded in alerts_sent (the console's alerts page), after its delivery.
  const alerter = createRecordedAlerter(pool, {
    url: config.alertWebhookUrl,
    consoleUrl: config.consolePublicUrl,
    logger,
    service: 'webhook-inbox worker',
  });
  // The alerts of this worker's group's destinations: circuit open, paused, failing (docs/destinations.md#alerts).
  const destinationMonitor = startDestinationMonitor({
    pool,
    alerter,
    destinations: config.destinations.filter((d) => d.group === config.group),
    failureRate: config.destinationAlerts.failureRate,
    intervalMs: config.destinationAlerts.intervalMs,
    logger,
  });
  // Its own pg-boss, apart from the effects' one: it runs the cron scheduler and works the operations' queues.
  const boss = createOperationsBoss(config.databaseUrl, {
    applicationName: 'webhook-inbox-worker-ops',
    onError: (error) => logger.warn({ err: error }, 'operations pg-boss error'),
  });
  try {
    await boss.start();
    await ensureQueues(boss);
    await schedulePurge(boss, {
      cron: config.retention.cron,
      payloadDays: config.retention.payloadDays,
      keyDays: config.retention.keyDays,
      historyDays: config.retention.historyDays,
      auditDays: config.retention.auditDays,
    });
    await boss.work(PURGE_QUEUE, createPurgeHandler(pool, { logger, onRun: hooks.onRetentionRun }));
    if (config.stripeApiKey) await scheduleReconciliation(boss, pool, config, logger);
  } catch (error) {
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await destinationMonitor.close();
    await alerter.close();
    await pool.end().catch(() => {});
    throw error;
  }

  return {
    onDead: (event) => void alertDead(alerter, pool, event, logger),
    alertStats: () => alerter.stats(),
    pool,
    async stop() {
      await boss.stop({ graceful: true, close: true, timeout: 10_000 }).catch((error: unknown) => {
        logger.warn({ err: error }, 'operations pg-boss did not stop cleanly');
      });
      await destinationMonitor.close();
      await alerter.close();
      await pool.end().catch(() => {});
    },
  };
}

async function scheduleReconciliation(
  boss: PgBoss,
  pool: pg.Pool,
  config: WorkerConfig,
  logger: Logger,
): Promise<void> {
  const { default: Stripe } = await import('stripe');
  const stripe = new Stripe(config.stripeApiKey ?? '');
  // Exclusive: a slow reconciliation is never joined by the next occurrence.
  await boss.createQueue(RECONCILE_QUEUE, { policy: 'exclusive', retryLimit: 1, expireInSeconds: 1800 });
  await boss.schedule(RECONCILE_QUEUE, config.reconcile.cron, {}, { tz: 'UTC' });
  await boss.work(RECONCILE_QUEUE, async () => {
    const report = await reconcileStripe({
      stripe,
      pool,
      boss,
      since: sinceDuration(config.reconcile.since),
      logger,
    });
    await auditReconcile(pool, systemPrincipal('reconcile'), report);
    logger.info({ ...report, byType: undefined }, 'stripe reconciliation');
    return report;
  });
}

/** One alert per effect that failed its last retry, or one for the event; the alerter groups repeats. */
async function alertDead(alerter: Alerter, pool: pg.Pool, event: DeadEvent, logger: Logger): Promise<void> {
  const base = {
    provider: event.provider,
    eventId: event.eventId,
    type: event.type,
    attempts: event.attempts,
    ...(event.group === DEFAULT_GROUP ? {} : { group: event.group }),
  };
  try {
    // The event log's own read (event-store): its effects with their last errors, and its payload.
    const detail = await getEvent(pool, event.provider, event.eventId);
    const payload = detail?.payload ?? undefined;
    // Another group's failed effects are that group's to report.
    const ours = (await loadEffectLookup(pool, event.group))?.(event.provider, event.type);
    const failed =
      detail?.effects.filter(
        (effect) => effect.status === 'failed' && (ours === undefined || ours.includes(effect.effect)),
      ) ?? [];
    if (failed.length === 0) {
      alerter.notify({ kind: 'event_dead', ...base, error: event.lastError ?? 'unknown error', payload });
      return;
    }
    for (const { effect, lastError } of failed) {
      alerter.notify({
        kind: 'effect_failed',
        ...base,
        effect,
        error: lastError ?? event.lastError,
        payload,
      });
    }
  } catch (error) {
    // The database is what failed: alert with what we have rather than not at all.
    logger.warn({ err: error }, 'could not read the dead event for its alert');
    alerter.notify({ kind: 'event_dead', ...base, error: event.lastError ?? 'unknown error' });
  }
}
