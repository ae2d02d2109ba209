import { loadDotEnv } from '@webhook-inbox/db';
import { configOrExit, installShutdown } from '@webhook-inbox/env/startup';
import { parseConfig } from './env.ts';
import { createLogger } from './logger.ts';

loadDotEnv();
const config = configOrExit('worker', () => parseConfig());
const logger = createLogger(config.logLevel);
// Tracing first, and only when the OTEL_* environment asks for it: the SDK must see `pg` being imported, so the
// worker (which imports it) is loaded after it.
const tracing = config.tracing
  ? (await import('@webhook-inbox/tracing')).startTracing({ serviceName: 'webhook-inbox-worker' })
  : undefined;
const { startWorker } = await import('./worker.ts');
const starting = startWorker(config, { logger });
starting.catch(() => {}); // A failed start is reported below.

// Installed in the same tick as the start, so a SIGTERM during start-up is a graceful stop too. First
// SIGTERM/SIGINT: stop fetching, wait (bounded) for running effects, exit 0. A second one: exit now.
installShutdown(async () => {
  await (await starting).close();
  await tracing?.shutdown();
}, logger);

try {
  await starting;
} catch (error) {
  logger.fatal({ err: error }, 'worker failed to start');
  logger.flush();
  process.exit(1);
}
