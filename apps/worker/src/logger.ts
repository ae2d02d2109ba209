import type pino from 'pino';
import { createServiceLogger, type Logger } from '@webhook-inbox/env/logger';
import type { LogLevel } from './env.ts';

export type { Logger };

/**
 * JSON lines on stdout, each written as it comes: a worker's last lines before it dies (a failing effect, a lost
 * connection) are the ones an operator needs, so none waits in a buffer. At `info` an event writes one line.
 * Effects log their provider, event key and effect name; never a payload, headers or an address (redacted should
 * someone log more later).
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return createServiceLogger({
    service: 'worker',
    level,
    redact: ['payload', '*.payload', 'headers', '*.headers', 'to', '*.to', 'email', '*.email'],
    destination,
  });
}
