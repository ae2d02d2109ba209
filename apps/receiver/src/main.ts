import { loadDotEnv } from '@webhook-inbox/db/dotenv';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { configOrExit } from '@webhook-inbox/env/startup';
import { parseConfig } from './env.ts';
import { createLogger, flushLogs } from './logger.ts';
import { installShutdown } from './shutdown.ts';

/**
 * The receiver as this process, configured by the environment only (and a `.env` file if present): it listens
 * until SIGTERM/SIGINT, then shuts down gracefully and exits. Exits 2 on a configuration error (what is wrong is
 * on stderr), 1 when it cannot start. `node apps/receiver/src/server.ts` here, `npx webhook-inbox receiver` from
 * the published packages.
 */
export async function runReceiver(): Promise<void> {
  loadDotEnv();
  const config = configOrExit('receiver', () => parseConfig());
  const logger = createLogger(config.logLevel);
  // Tracing first, and only when the OTEL_* environment asks for it: the SDK must see `pg` being imported, so
  // the receiver (which imports it) is loaded after it.
  const tracing = config.tracing
    ? (await import('@webhook-inbox/inbox/telemetry/sdk')).startTracing({
        serviceName: 'webhook-inbox-receiver',
        statementSpans: false,
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
}
