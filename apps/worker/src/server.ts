import { loadDotEnv } from '@webhook-inbox/db';
import { runService } from '@webhook-inbox/env/startup';
import { parseConfig } from './env.ts';
import { createLogger } from './logger.ts';

loadDotEnv();
// First SIGTERM/SIGINT, from the start on: stop fetching, wait (bounded) for running effects, exit 0. A second
// one: exit now.
await runService({
  service: 'worker',
  parseConfig: () => parseConfig(),
  createLogger: (config) => createLogger(config.logLevel),
  // Only when the OTEL_* environment asks for it.
  startTracing: async (config) =>
    config.tracing
      ? (await import('@webhook-inbox/tracing')).startTracing({ serviceName: 'webhook-inbox-worker' })
      : undefined,
  start: async (config, logger) => (await import('./worker.ts')).startWorker(config, { logger }),
  stopSignals: 'starting',
});
