import { loadDotEnv } from '@webhook-inbox/db/dotenv';
import { ConfigError, parseConfig } from './env.ts';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { createLogger, flushLogs } from './logger.ts';
import { installShutdown } from './shutdown.ts';

// The receiver on its own: `pnpm --filter @webhook-inbox/receiver start` (or `node apps/receiver/src/server.ts`).
loadDotEnv();
let config;
try {
  config = parseConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`receiver: ${error.message}\n`);
  process.exit(2);
}
const logger = createLogger(config.logLevel);
// Tracing first, and only when the OTEL_* environment asks for it: the SDK must see `pg` being imported, so the
// receiver (which imports it) is loaded after it.
const tracing = config.tracing
  ? (await import('@webhook-inbox/inbox/telemetry/sdk')).startTracing({
      serviceName: 'webhook-inbox-receiver',
    })
  : undefined;
const { startReceiver } = await import('./receiver.ts');
try {
  const receiver = await startReceiver(config, { logger });
  installShutdown(async () => {
    await receiver.close();
    await tracing?.shutdown();
  }, logger);
} catch (error) {
  logger.fatal({ err: errorFields(error) }, 'receiver failed to start');
  await flushLogs(logger);
  process.exit(1);
}
