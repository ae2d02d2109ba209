import type pino from 'pino';
import { createServiceLogger, flushLogs, type Logger } from '@webhook-inbox/env/logger';
import type { LogLevel } from './config/env.ts';

export { flushLogs, type Logger };

/** Never logged: a secret, a signature header, the headers, the payload or the raw body. */
const REDACTED = [
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
] as const;

/**
 * JSON lines on stdout, buffered (a burst of requests costs a few writes). A request logs its provider, event
 * key, outcome and latency; never a secret, a signature header, or the payload (`REDACTED`).
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return createServiceLogger({
    service: 'receiver',
    level,
    redact: REDACTED,
    buffered: true,
    destination,
  });
}

/** Decides which lines of a repeated kind are written, and summarises the rest. */
export interface LogSampler {
  /** True when a line of this kind may be written now; false counts it as suppressed. */
  allow(kind: string): boolean;
  /** Writes the summary of what was suppressed since the last one, and stops. */
  close(): void;
}

interface LogSamplerOptions {
  /** Lines of one kind written per window; the rest are counted. */
  perWindow: number;
  windowMs: number;
}

/**
 * A flood of refused requests (10k unsigned requests a second) must not become a flood of log lines: the first
 * `perWindow` lines of each kind (e.g. `webhook refused` / `invalid_signature`) in each window are written,
 * and at the end of the window one line per kind says how many were suppressed. The metrics still count every
 * request.
 */
export function createLogSampler(
  logger: Logger,
  { perWindow, windowMs }: LogSamplerOptions = { perWindow: 20, windowMs: 10_000 },
): LogSampler {
  const seen = new Map<string, number>();
  const summarise = () => {
    for (const [kind, count] of seen) {
      if (count > perWindow) {
        logger.warn({ kind, suppressed: count - perWindow, windowMs }, 'similar log lines suppressed');
      }
    }
    seen.clear();
  };
  const timer = setInterval(summarise, windowMs);
  timer.unref();
  return {
    allow(kind) {
      const count = (seen.get(kind) ?? 0) + 1;
      seen.set(kind, count);
      return count <= perWindow;
    },
    close() {
      clearInterval(timer);
      summarise();
    },
  };
}

/** Longest echoed value (a provider name from the URL, an error message) written to a log or an answer. */
const MAX_ECHOED_CHARS = 100;

/** `text` cut to `max` characters, saying how long it was: `abc… (15000 chars)`. */
export function truncate(text: string, max = MAX_ECHOED_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
