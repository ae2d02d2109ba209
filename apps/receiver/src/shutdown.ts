import { flushLogs, type Logger } from './logger.ts';

/**
 * SIGTERM/SIGINT once: run `stop` and exit 0 (1 if it failed). A second signal exits at once, for the operator
 * who does not want to wait for in-flight requests.
 */
export function installShutdown(stop: () => Promise<void>, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop().then(
      async () => {
        await flushLogs(logger);
        process.exit(0);
      },
      async (error: unknown) => {
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'shutdown failed');
        await flushLogs(logger);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
