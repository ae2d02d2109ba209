import { loadDotEnv } from '@webhook-inbox/db/dotenv';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { configOrExit, installShutdown } from '@webhook-inbox/env/startup';
import type { startTracing } from '@webhook-inbox/tracing';
import { parseConfig } from './config/env.ts';
import { createLogger, flushLogs } from './logger.ts';

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
    ? (await loadTracing()).startTracing({
        serviceName: 'webhook-inbox-receiver',
        statementSpans: false,
      })
    : undefined;
  const { startReceiver } = await import('./receiver.ts');
  try {
    const receiver = await startReceiver(config, { logger });
    installShutdown(
      async () => {
        await receiver.close();
        await tracing?.shutdown();
      },
      logger,
      () => flushLogs(logger),
    );
  } catch (error) {
    logger.fatal({ err: errorFields(error) }, 'receiver failed to start');
    await flushLogs(logger);
    process.exit(1);
  }
}

const TRACING_PACKAGE = '@webhook-inbox/tracing';

/**
 * `@webhook-inbox/tracing`: the OpenTelemetry SDK and exporters, an optional peer of this package that a team
 * installs only to export traces. OTEL_* asking for traces without it is a configuration error (exit 2), never a
 * receiver that silently exports nothing.
 */
async function loadTracing(): Promise<{ startTracing: typeof startTracing }> {
  try {
    return await import('@webhook-inbox/tracing');
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(message).includes(`'${TRACING_PACKAGE}'`)) throw error;
    process.stderr.write(
      `receiver: the OTEL_* environment turns tracing on, but ${TRACING_PACKAGE} is not installed: ` +
        `install it (npm install ${TRACING_PACKAGE}) or unset the OTEL_* variables\n`,
    );
    process.exit(2);
  }
}
