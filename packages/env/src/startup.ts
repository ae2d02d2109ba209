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

/** What the start-up writes with: the shutdown's methods and `fatal`, for a start that failed. */
export interface ServiceLogger extends ShutdownLogger {
  fatal(fields: object, message: string): void;
}

export interface RunServiceOptions<C, L extends ServiceLogger, S extends { close(): Promise<unknown> }> {
  /** The process's name on stderr and in its log lines: `receiver`, `worker`. */
  service: string;
  /** Reads the environment; a `ConfigError` exits 2 (`configOrExit`). */
  parseConfig: () => C;
  createLogger: (config: C) => L;
  /**
   * Starts tracing when the configuration asks for it. It runs before `start`, which loads the modules that
   * import `pg`: the SDK must see that import to instrument it.
   */
  startTracing: (config: C) => Promise<{ shutdown(): Promise<void> } | undefined>;
  /** Loads and starts the service; its `close()` is the graceful stop. */
  start: (config: C, logger: L) => Promise<S>;
  /**
   * When SIGTERM/SIGINT become a graceful stop: `starting` (from the tick the start begins: a signal during
   * start-up waits for the start, then stops) or `started` (once the start has succeeded).
   */
  stopSignals: 'starting' | 'started';
  /** Writes what the logger buffers, before the process exits. Default: `logger.flush()`. */
  flush?: (logger: L) => Promise<void>;
  /** The `err` field of the `<service> failed to start` line. Default: the error itself. */
  errorField?: (error: unknown) => unknown;
}

/**
 * A service's process, the same for the receiver and the worker: configuration (exit 2 when wrong), logger,
 * tracing, start, then a graceful stop on SIGTERM/SIGINT (`installShutdown`). A start that fails logs
 * `<service> failed to start` and exits 1.
 */
export async function runService<C, L extends ServiceLogger, S extends { close(): Promise<unknown> }>(
  options: RunServiceOptions<C, L, S>,
): Promise<void> {
  const config = configOrExit(options.service, options.parseConfig);
  const logger = options.createLogger(config);
  const tracing = await options.startTracing(config);
  const flush = () => (options.flush ? options.flush(logger) : Promise.resolve(logger.flush()));
  const stop = async (service: S) => {
    await service.close();
    await tracing?.shutdown();
  };
  const starting = options.start(config, logger);
  if (options.stopSignals === 'starting') {
    starting.catch(() => {}); // A failed start is reported below.
    installShutdown(async () => stop(await starting), logger, flush);
  }
  try {
    const service = await starting;
    if (options.stopSignals === 'started') installShutdown(() => stop(service), logger, flush);
  } catch (error) {
    logger.fatal(
      { err: options.errorField ? options.errorField(error) : error },
      `${options.service} failed to start`,
    );
    await flush();
    process.exit(1);
  }
}
