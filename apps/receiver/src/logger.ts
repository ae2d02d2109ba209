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
 * Asynchronous writes (a burst of requests coalesces into few write calls instead of one blocking write per
 * line), flushed synchronously on exit so the last lines, such as "receiver stopped", are not lost.
 */
function stdout(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, sync: false });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout already closed: nothing more can be written anyway.
    }
  });
  return destination;
}
