import pino from 'pino';
import type { LogLevel } from './env.ts';

export type Logger = pino.Logger;

/**
 * JSON lines on stdout. Effects log their provider, event key and effect name; never a payload or a secret.
 * `redact` is a second line of defence should someone log more later.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'worker' },
      redact: {
        paths: ['payload', '*.payload', 'headers', '*.headers', 'to', '*.to', 'email', '*.email'],
        censor: '[redacted]',
      },
    },
    destination ?? stdout(),
  );
}

/** Asynchronous writes, flushed on exit so the last lines are not lost. */
function stdout(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, sync: false });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout already closed.
    }
  });
  return destination;
}
