import pino from 'pino';
import type { LogLevel } from './index.ts';

export type Logger = pino.Logger;

export interface ServiceLoggerOptions {
  /** The `service` field of every line: `receiver`, `worker`. */
  service: string;
  level: LogLevel;
  /** Paths whose values are written as `[redacted]`: a second line of defence should someone log more later. */
  redact: readonly string[];
  /** Where the lines go; default: stdout, asynchronous, flushed on exit. */
  destination?: pino.DestinationStream;
  /**
   * Buffer stdout: lines collect until 4 KiB or 200 ms, whichever comes first, so a burst of requests costs a
   * few write calls instead of one per line. Default: each line written as it comes.
   */
  buffered?: boolean;
}

/** JSON lines, one logger per process, built the same way for the receiver and the worker. */
export function createServiceLogger({
  service,
  level,
  redact,
  destination,
  buffered = false,
}: ServiceLoggerOptions): Logger {
  return pino(
    { level, base: { service }, redact: { paths: [...redact], censor: '[redacted]' } },
    destination ?? stdout(buffered),
  );
}

/** Asynchronous writes, flushed synchronously on exit so the last lines (such as "receiver stopped") are kept. */
function stdout(buffered: boolean): pino.DestinationStream {
  const destination = pino.destination(
    buffered ? { dest: 1, sync: false, minLength: 4096, periodicFlush: 200 } : { dest: 1, sync: false },
  );
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout already closed: nothing more can be written anyway.
    }
  });
  return destination;
}

/**
 * Waits (up to `timeoutMs`) until every buffered line has been written: call before `process.exit`, which
 * would otherwise drop a write still in flight (the exit hook can only write what is not already being written).
 */
export function flushLogs(logger: Logger, timeoutMs = 1_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

/**
 * The logger a service starts with (the one its caller gave, or `create()`), once it has written
 * `<service> starting` with the configuration as it is safe to log.
 */
export function startingLogger<L extends Pick<Logger, 'info'>>(
  service: string,
  given: L | undefined,
  create: () => L,
  safeConfig: Record<string, unknown>,
): L {
  const logger = given ?? create();
  logger.info({ config: safeConfig }, `${service} starting`);
  return logger;
}
