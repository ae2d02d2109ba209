import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { type DeadEvent, type Inbox, type InboxOptions } from '@webhook-inbox/inbox';
import { startingLogger } from '@webhook-inbox/env/logger';
import { createDestinations } from '@webhook-inbox/inbox/destinations';
import { registerAlertMetrics } from '@webhook-inbox/operator';
import { createApp } from './app.ts';
import { createExampleInbox } from './effects/index.ts';
import { describeConfig, type WorkerConfig } from './env.ts';
import { startOperations, type Operations } from './operations.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMailer } from './mail.ts';
import { createMetrics } from './metrics.ts';
import { registerDestinationMetrics } from './destination-metrics.ts';

export interface Worker {
  /** `/healthz` and `/metrics`, e.g. `http://127.0.0.1:3001` (the real port when `config.port` was 0). */
  readonly url: string;
  /**
   * Graceful stop, once: stops fetching, waits for running effects (up to `config.shutdownTimeoutMs`; whatever is
   * still running then is retried by the next worker), closes the mail transport, then the HTTP server.
   */
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  logger?: Logger;
  /** Called when an event is dead (after the log line). Alerts hook in here. */
  onDead?: (event: DeadEvent) => void | Promise<void>;
  /** Makes the Inbox the example effects are registered on (see `createExampleInbox`). Default: `createInbox`. */
  createInbox?: (options: InboxOptions) => Inbox;
}

/**
 * Starts the worker in this process: the example effects, their queue worker, and the health/metrics server.
 * Requires a migrated database (`pnpm db:migrate`).
 *
 * @example
 * const worker = await startWorker(parseConfig(process.env));
 * await worker.close();
 */
export async function startWorker(config: WorkerConfig, options: StartWorkerOptions = {}): Promise<Worker> {
  const logger = startingLogger(
    'worker',
    options.logger,
    () => createLogger(config.logLevel),
    describeConfig(config),
  );
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    dir: config.mailDir,
    logger,
  });
  const metrics = createMetrics();
  let operations: Operations;
  try {
    operations = await startOperations(config, logger, {
      onRetentionRun: (run) => metrics.retentionRun(run),
    });
  } catch (error) {
    mailer.close();
    throw error;
  }
  registerAlertMetrics(metrics.registry, () => operations.alertStats());
  const inbox = createExampleInbox({
    mailer,
    messageIdDomain: config.mailFrom.split('@')[1] || 'localhost',
    logger,
    observer: metrics.observer,
    createInbox: options.createInbox,
    onDead: (event) => {
      operations.onDead(event);
      return options.onDead?.(event);
    },
  });

  // The destinations of this worker's group: their fan-out effects join the inbox's, and their queues exist before
  // the inbox's first fan-out sends to them.
  const ours = config.destinations.filter((d) => d.group === config.group);
  const destinations = createDestinations({
    connectionString: config.databaseUrl,
    pooler: config.databasePooler,
    destinations: ours,
    log: logger,
    observer: registerDestinationMetrics(metrics.registry, {
      pool: operations.pool,
      destinations: ours.map((d) => d.name),
      logger,
    }),
  });
  destinations.register(inbox);

  let inboxWorker;
  try {
    await destinations.start();
    inboxWorker = await inbox.start({
      connectionString: config.databaseUrl,
      pooler: config.databasePooler,
      group: config.group,
      queue: config.queue,
      batchSize: config.batchSize,
      concurrency: config.concurrency,
      poolSize: config.poolSize,
      pollingIntervalSeconds: config.pollingIntervalSeconds,
      superviseIntervalSeconds: config.superviseIntervalSeconds,
      statementTimeoutMs: config.statementTimeoutMs,
    });
    await destinations.work();
  } catch (error) {
    await inboxWorker?.stop({ graceful: false });
    await destinations.stop();
    await operations.stop();
    mailer.close();
    throw error;
  }

  let stopping = false;
  const app = createApp({
    registry: metrics.registry,
    isStopping: () => stopping,
    allowedHosts: config.allowedHosts,
  });
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info: AddressInfo) =>
      resolve(info.port),
    );
    server.once('error', reject);
  }).catch(async (error: unknown) => {
    await inboxWorker.stop({ graceful: false });
    await destinations.stop();
    await operations.stop();
    mailer.close();
    throw error;
  });
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url }, 'worker listening (/healthz, /metrics)');

  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= (async () => {
        stopping = true;
        const started = Date.now();
        logger.info('worker stopping: no new jobs, waiting for running effects');
        await inboxWorker
          .stop({ graceful: true, timeoutMs: config.shutdownTimeoutMs })
          .catch((error: unknown) => {
            logger.warn({ err: error }, 'the queue worker did not stop cleanly');
          });
        await destinations.stop({ timeoutMs: config.shutdownTimeoutMs }).catch((error: unknown) => {
          logger.warn({ err: error }, 'the destinations did not stop cleanly');
        });
        await operations.stop();
        mailer.close();
        await new Promise<void>((resolve) => {
          server?.close(() => resolve());
          (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
        });
        // The inbox's worker logged "worker stopped" (its queues and pool); this is the whole process's stop.
        logger.info({ ms: Date.now() - started }, 'shutdown complete');
        logger.flush();
      })()),
  };
}
