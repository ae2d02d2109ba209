import type pg from 'pg';
import type { Logger } from 'pino';
import { eventPayloads } from './sql/index.ts';

/**
 * The partitions of `webhook_event_payloads`, one per UTC day: created ahead of the days they hold (an insert
 * for a day without one fails, and the receiver answers 503), dropped by retention (`@webhook-inbox/operator`'s
 * retention.ts).
 */

/** How many days ahead of today partitions exist after `ensurePayloadPartitions`. */
export const PARTITION_DAYS_AHEAD = 14;

/** How often a running worker checks that the partitions ahead exist (a catalog read; DDL only when one is due). */
const PARTITION_CHECK_INTERVAL_MS = 60 * 60 * 1000;

const DAY_MS = 86_400_000;

export interface PayloadPartition {
  name: string;
  /** The first instant it holds (UTC midnight); the next day's midnight is the first it does not. */
  day: Date;
  detachPending: boolean;
}

/** The partitions named by day, oldest first (a table attached by hand under another name is left out). */
export async function listPayloadPartitions(pool: pg.Pool | pg.PoolClient): Promise<PayloadPartition[]> {
  const { rows } = await pool.query<eventPayloads.PartitionRow>(eventPayloads.selectPartitions());
  const partitions: PayloadPartition[] = [];
  for (const row of rows) {
    const day = eventPayloads.partitionDay(row.name);
    if (day) partitions.push({ name: row.name, day, detachPending: row.detachPending });
  }
  return partitions.sort((a, b) => a.day.getTime() - b.day.getTime());
}

interface EnsurePartitionsOptions {
  /** Days after today to cover. Default `PARTITION_DAYS_AHEAD`. */
  daysAhead?: number;
  /**
   * The first day to cover, when it is before today: for events written with a past `received_at` (an import, a
   * test, a benchmark's history). Default today.
   */
  from?: Date;
}

/**
 * Creates the partitions of today and the next `daysAhead` days (UTC, by the database's clock, which stamps
 * `received_at`) that do not exist yet, and says which it created. Idempotent and safe from many processes at
 * once. Never blocks the receiver: see `eventPayloads.createPartitions`.
 *
 * @example
 * const { created } = await ensurePayloadPartitions(pool);
 */
export async function ensurePayloadPartitions(
  pool: pg.Pool,
  { daysAhead = PARTITION_DAYS_AHEAD, from }: EnsurePartitionsOptions = {},
): Promise<{ created: string[] }> {
  const { rows } = await pool.query<{ today: string }>(
    `select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as today`,
  );
  const today = new Date(`${rows[0]?.today}T00:00:00.000Z`);
  const first = from ? new Date(Math.min(today.getTime(), startOfDay(from).getTime())) : today;
  const days = Math.round((today.getTime() - first.getTime()) / DAY_MS) + daysAhead + 1;
  const wanted = Array.from({ length: days }, (_, i) => new Date(first.getTime() + i * DAY_MS));
  // Read the catalog first: on all but one check a day, everything exists and no lock is taken.
  const names = new Set((await listPayloadPartitions(pool)).map((partition) => partition.name));
  const missing = wanted.filter((day) => !names.has(eventPayloads.partitionName(day)));
  if (missing.length === 0) return { created: [] };
  const { rows: made } = await pool.query<{ day: string; created: boolean }>(
    eventPayloads.createPartitions(missing.map((day) => day.toISOString().slice(0, 10))),
  );
  return {
    created: made
      .filter((row) => row.created)
      .map((row) => eventPayloads.partitionName(new Date(`${row.day}T00:00:00.000Z`))),
  };
}

/**
 * Keeps the partitions ahead while a worker runs: checks now, then every `intervalMs`. A failed check is logged
 * and tried again at the next interval (there are `PARTITION_DAYS_AHEAD` days of margin). Returns the stop.
 */
export function keepPayloadPartitionsAhead(
  pool: pg.Pool,
  logger: Pick<Logger, 'info' | 'warn'>,
  intervalMs = PARTITION_CHECK_INTERVAL_MS,
): { ready: Promise<void>; stop: () => void } {
  const check = async () => {
    try {
      const { created } = await ensurePayloadPartitions(pool);
      if (created.length > 0) logger.info({ created }, 'payload partitions created');
    } catch (error) {
      logger.warn({ err: error }, 'could not create the payload partitions ahead; retrying later');
    }
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return { ready: check(), stop: () => clearInterval(timer) };
}

function startOfDay(time: Date): Date {
  return new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS);
}

/** The first instant after a partition's day. */
export function partitionEnd(partition: PayloadPartition): Date {
  return new Date(partition.day.getTime() + DAY_MS);
}
