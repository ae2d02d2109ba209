import { errorFields } from '@webhook-inbox/inbox/error-text';
import { deliveryCounts } from '@webhook-inbox/operator/sql';
import type pg from 'pg';
import type { Logger } from '../logger.ts';

export interface DeliveryCounter {
  /** Counts one answered webhook request, in memory: never waits, never throws, never touches the database. */
  count(provider: string, outcome: string, httpStatus: number): void;
  /** Writes the counts held so far (one upsert); a failed write keeps them for the next flush. */
  flush(): Promise<void>;
  /** Stops the timer and flushes once more: the graceful shutdown's last write, before the pool closes. */
  stop(): Promise<void>;
}

interface DeliveryCounterOptions {
  pool: pg.Pool;
  logger: Logger;
  /** How often the counts are written. Default 5 s. */
  flushIntervalMs?: number;
  /**
   * Rows (minute × provider × outcome) held at most while the database refuses the writes; past it the oldest
   * minute's rows are dropped, and the next successful flush logs how many requests went uncounted. Default
   * 10 000 (a week of minutes for one provider and outcome; a few days for several).
   */
  maxRows?: number;
  /** The clock that picks a request's minute. */
  now?: () => number;
}

type DeliveryCount = deliveryCounts.DeliveryCount;

const MINUTE_MS = 60_000;

/**
 * The receiver's webhook requests per minute, provider and outcome (`webhook_delivery_counts`, the console
 * overview's accepted / duplicate / refused chart), counted off the request path: a request adds 1 to a map, and a
 * timer adds the map to the table every `flushIntervalMs` with one statement. A write that fails (the database is
 * down, the table locked) is logged once per run of failures and retried with the next flush, the counts kept in
 * memory up to `maxRows`; nothing a webhook request waits for. A write whose answer is lost after its commit is
 * retried too, so such a minute may count its requests twice.
 *
 * @example
 * const counter = createDeliveryCounter({ pool, logger });
 * counter.count('stripe', 'accepted', 200);
 * await counter.stop(); // at shutdown, before pool.end()
 */
export function createDeliveryCounter(options: DeliveryCounterOptions): DeliveryCounter {
  const { pool, logger } = options;
  const maxRows = options.maxRows ?? 10_000;
  const now = options.now ?? Date.now;
  let pending = new Map<string, DeliveryCount>();
  let dropped = 0;
  let failing = false;
  let flushing: Promise<void> | undefined;

  const keyOf = (minuteMs: number, provider: string, outcome: string) =>
    `${minuteMs}\n${provider}\n${outcome}`;

  /** Adds `row` to `into`, dropping the oldest rows (first inserted) beyond `maxRows`. */
  const add = (into: Map<string, DeliveryCount>, row: DeliveryCount) => {
    const key = keyOf(row.minute.getTime(), row.provider, row.outcome);
    const held = into.get(key);
    if (held) {
      held.count += row.count;
      return;
    }
    into.set(key, { ...row });
    for (const [oldest, { count }] of into) {
      if (into.size <= maxRows) break;
      into.delete(oldest);
      dropped += count;
    }
  };

  const write = async () => {
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending = new Map();
    try {
      await pool.query(deliveryCounts.addDeliveryCounts(batch));
    } catch (error) {
      // Back in front of what was counted meanwhile: the oldest rows stay the first to drop.
      const merged = new Map<string, DeliveryCount>();
      for (const row of [...batch, ...pending.values()]) add(merged, row);
      pending = merged;
      if (!failing) {
        logger.warn(
          { err: errorFields(error), rows: pending.size },
          'could not write the delivery counts: kept in memory, retried every flush',
        );
      }
      failing = true;
      return;
    }
    if (failing || dropped > 0) {
      logger.info({ uncounted: dropped }, 'delivery counts written again');
    }
    failing = false;
    dropped = 0;
  };

  const flush = () =>
    (flushing ??= write().finally(() => {
      flushing = undefined;
    }));

  const timer = setInterval(() => void flush(), options.flushIntervalMs ?? 5_000);
  timer.unref();

  return {
    count(provider, outcome, httpStatus) {
      // On every webhook request: a row already held (the same minute, provider and outcome) is one increment.
      const minuteMs = Math.floor(now() / MINUTE_MS) * MINUTE_MS;
      const held = pending.get(keyOf(minuteMs, provider, outcome));
      if (held) held.count += 1;
      else add(pending, { minute: new Date(minuteMs), provider, outcome, httpStatus, count: 1 });
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
