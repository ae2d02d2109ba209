import type pg from 'pg';
import { errorLine } from '@webhook-inbox/inbox/error-text';
import { alertsSent } from '../sql/index.ts';
import type { Alerter, AlerterOptions, AlertLogger, AlertOutcome } from './alerter.ts';
import { createAlerter } from './delivery.ts';

export interface AlertJournal {
  /** The alerter's `onOutcome`: writes one `alerts_sent` row, in the background; a failure is logged. */
  record: (outcome: AlertOutcome) => void;
  /** Waits for the rows being written (after `alerter.close()`, before the pool closes). */
  flush(): Promise<void>;
}

/**
 * The durable record of alert messages (`alerts_sent`), which the console's alerts page reads. One insert per
 * message, and messages are already grouped (one per problem per window), so it costs the database little; it
 * is written after the delivery, never on an event's path, and a database that cannot take it loses the row,
 * not the alert.
 *
 * @example
 * const journal = createAlertJournal(pool, logger);
 * const alerter = createAlerter({ url, logger, onOutcome: journal.record });
 * // at shutdown
 * await alerter.close();
 * await journal.flush();
 */
export function createAlertJournal(pool: pg.Pool, logger: AlertLogger): AlertJournal {
  const writing = new Set<Promise<void>>();
  return {
    record: (outcome) => {
      const write = pool.query(alertsSent.insertAlertSent(outcome)).then(
        () => {},
        (error: unknown) => {
          logger.warn({ err: errorLine(error), alert: outcome.kind }, 'alert sent but not recorded');
        },
      );
      writing.add(write);
      void write.finally(() => writing.delete(write));
    },
    async flush() {
      await Promise.all(writing);
    },
  };
}

/**
 * An alerter whose messages are recorded in `alerts_sent` (the receiver's and the worker's): its `close()`
 * also waits for the last rows, so the pool may close after it.
 *
 * @example
 * const alerter = createRecordedAlerter(pool, { url: env.ALERT_WEBHOOK_URL, logger, service: 'webhook-inbox worker' });
 * // at shutdown, before pool.end()
 * await alerter.close();
 */
export function createRecordedAlerter(pool: pg.Pool, options: Omit<AlerterOptions, 'onOutcome'>): Alerter {
  const journal = createAlertJournal(pool, options.logger);
  const alerter = createAlerter({ ...options, onOutcome: journal.record });
  return {
    notify: (alert) => alerter.notify(alert),
    stats: () => alerter.stats(),
    close: async (closeOptions) => {
      const stats = await alerter.close(closeOptions);
      await journal.flush();
      return stats;
    },
  };
}
