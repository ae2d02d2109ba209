// The alerter's interface: what it is given (`AlerterOptions`, checked by `resolveAlerterOptions`), what it offers
// (`Alerter`) and counts (`AlerterStats`), what became of each message (`AlertOutcome`). `createAlerter`
// (delivery.ts) builds one.
import type { Logger } from 'pino';
import type { AlertSent } from '../sql/alerts-sent.ts';
import type { Alert } from './model.ts';

/** What the alerter needs from a pino logger. */
export type AlertLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/** What became of one alert message: its `alerts_sent` row, with the kind and outcome typed. */
export interface AlertOutcome extends AlertSent {
  kind: Alert['kind'];
  /** `sent` (2xx), `logged` (no URL: the log line is the alert), `failed` (refused, or out of attempts). */
  outcome: 'sent' | 'logged' | 'failed';
}

export interface AlerterOptions {
  /** Where to POST (`ALERT_WEBHOOK_URL`). Without it, alerts are only logged. */
  url?: string | undefined;
  logger: AlertLogger;
  /**
   * Repeats of one fingerprint within this window after its first occurrence are counted, not sent; when the
   * window closes they go out as one summary. Default 60 s.
   */
  groupWindowMs?: number;
  /** Injected for tests; defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Messages waiting to be sent, at most; beyond that new ones are dropped and counted. Default 200. */
  maxQueue?: number;
  /** Tries per message, the first included. Default 5. */
  maxAttempts?: number;
  /** First retry delay; doubled each retry, with jitter, up to `retryMaxDelayMs`. Default 1 s. */
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** One POST may take this long before it is abandoned (and retried). Default 5 s. */
  requestTimeoutMs?: number;
  /** Default bound on `close()`. Default 5 s. */
  closeTimeoutMs?: number;
  /** Longest payload excerpt, in characters. Default 500. */
  excerptLength?: number;
  /** Names the sender in the message title. Default `webhook-inbox`. */
  service?: string;
  /**
   * The console's address (`CONSOLE_PUBLIC_URL`, validated by the service's configuration): an event's alert links
   * to the event's page and to its failure group's. Unset: no links.
   */
  consoleUrl?: string | undefined;
  /**
   * Told once per message after its last try (a durable record: `createAlertJournal`). Called on the sender's
   * turn, never on `notify()`'s; a throw is logged and ignored.
   */
  onOutcome?: (outcome: AlertOutcome) => void;
}

/** Running totals, for metrics and tests. */
export interface AlerterStats {
  /** `notify()` calls accepted (including those grouped). */
  notified: number;
  /** Occurrences folded into a group instead of being sent on their own. */
  grouped: number;
  /** Messages delivered (POST answered 2xx), or logged when there is no URL. */
  sent: number;
  /** Messages given up on after their last attempt or refused with a 4xx. */
  failed: number;
  /** Messages dropped because the queue was full, or still queued when `close()` ran out of time. */
  dropped: number;
  /** Retried POSTs. */
  retries: number;
  /** Messages waiting. */
  queued: number;
}

export interface Alerter {
  /**
   * Records an alert and returns at once: never throws, never waits on the network. The first occurrence of a
   * fingerprint is queued for sending immediately; repeats within the group window are counted.
   */
  notify(alert: Alert): void;
  /**
   * Sends the summaries of open groups and waits for the queue to drain, at most `timeoutMs`; then abandons
   * what is left (logged). Later `notify()` calls are logged only. Resolves, never rejects.
   */
  close(options?: { timeoutMs?: number }): Promise<AlerterStats>;
  stats(): AlerterStats;
}

function positive(name: string, value: number, integer = false): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `createAlerter: ${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`,
    );
  }
  return value;
}

/** The options with their defaults, each checked; throws a `RangeError` naming a bad one. */
export function resolveAlerterOptions(options: AlerterOptions) {
  return {
    url: options.url,
    logger: options.logger,
    groupWindowMs: positive('groupWindowMs', options.groupWindowMs ?? 60_000),
    maxQueue: positive('maxQueue', options.maxQueue ?? 200, true),
    maxAttempts: positive('maxAttempts', options.maxAttempts ?? 5, true),
    retryBaseDelayMs: positive('retryBaseDelayMs', options.retryBaseDelayMs ?? 1000),
    retryMaxDelayMs: positive('retryMaxDelayMs', options.retryMaxDelayMs ?? 15_000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs ?? 5000),
    closeTimeoutMs: options.closeTimeoutMs ?? 5000,
    excerptLength: options.excerptLength ?? 500,
  };
}
