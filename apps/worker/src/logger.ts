import type pino from 'pino';
import { createServiceLogger, type Logger } from '@webhook-inbox/env/logger';
import type { LogLevel } from './env.ts';

export type { Logger };

/**
 * JSON lines on stdout, buffered (an event's lines and its batch's cost a few writes, not one each). Effects log
 * their provider, event key and effect name; never a payload, headers or an address (redacted should someone log
 * more later).
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return createServiceLogger({
    service: 'worker',
    level,
    redact: ['payload', '*.payload', 'headers', '*.headers', 'to', '*.to', 'email', '*.email'],
    buffered: true,
    destination,
  });
}
