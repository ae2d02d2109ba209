import { ConfigError } from './index.ts';

/**
 * A process's configuration at start-up: `parse()`'s result, or, when the environment is wrong, every wrong
 * variable on stderr (`<service>: invalid configuration: ...`) and exit code 2, before anything has started.
 * Any other error is a bug and is thrown.
 */
export function configOrExit<T>(service: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(2);
  }
}

/** What the shutdown writes with: the few methods of the app's pino logger it uses. */
export interface ShutdownLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
  flush(): void;
}

/**
 * SIGTERM/SIGINT once: run `stop`, write what is buffered (`flush`), and exit 0 (1 if `stop` failed). A second
 * signal exits at once, for the operator who does not want to wait for in-flight work. Install it in the tick the
 * process starts its work, so a signal during start-up is a graceful stop too.
 */
export function installShutdown(
  stop: () => Promise<unknown>,
  logger: ShutdownLogger,
  flush: () => Promise<void> = () => {
    logger.flush();
    return Promise.resolve();
  },
): void {
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
        await flush();
        process.exit(0);
      },
      async (error: unknown) => {
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'shutdown failed');
        await flush();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
