import { loadDotEnv } from '@webhook-inbox/db/dotenv';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { runService } from '@webhook-inbox/env/startup';
import type { startTracing } from '@webhook-inbox/tracing';
import { parseConfig } from './config/env.ts';
import { createLogger, flushLogs } from './logger.ts';

/**
 * The receiver as this process, configured by the environment only (and a `.env` file if present): it listens
 * until SIGTERM/SIGINT, then shuts down gracefully and exits. Exits 2 on a configuration error (what is wrong is
 * on stderr), 1 when it cannot start. The apps/receiver entry here, `npx webhook-inbox receiver` from
 * the published packages.
 */
export async function runReceiver(): Promise<void> {
  loadDotEnv();
  await runService({
    service: 'receiver',
    parseConfig: () => parseConfig(),
    createLogger: (config) => createLogger(config.logLevel),
    // Only when the OTEL_* environment asks for it.
    startTracing: async (config) =>
      config.tracing
        ? (await loadTracing()).startTracing({ serviceName: 'webhook-inbox-receiver', statementSpans: false })
        : undefined,
    start: async (config, logger) => (await import('./receiver.ts')).startReceiver(config, { logger }),
    stopSignals: 'started',
    flush: (logger) => flushLogs(logger),
    errorField: errorFields,
  });
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
