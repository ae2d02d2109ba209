import pino from 'pino';
import type { LogLevel } from './env.ts';

export type Logger = pino.Logger;

/**
 * JSON lines on stdout. A request logs its provider, event key, outcome and latency; never a secret, a
 * signature header, or the payload. `redact` is a second line of defence should someone log more later.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'receiver' },
      redact: {
        paths: [
          'secret',
          'secrets',
          '*.secret',
          '*.secrets',
          'headers',
          '*.headers',
          'payload',
          '*.payload',
          'rawBody',
          '*.rawBody',
          'signature',
          '*.signature',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? stdout(),
  );
}

/**
 * Buffered, asynchronous writes: lines collect until 4 KiB or 200 ms, whichever comes first, so a burst of
 * requests costs a few write calls instead of one per line. Flushed synchronously on exit so the last lines,
 * such as "receiver stopped", are not lost.
 */
function stdout(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 200 });
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
