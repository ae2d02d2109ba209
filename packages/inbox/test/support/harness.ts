/**
 * Shared by the effect tests: a producer (ingest through the real receiver path) and the ledger queries the tests
 * assert on. Not a test file itself.
 */
import type pg from 'pg';
import { PgBoss } from 'pg-boss';
import { ingest } from '../../src/ingest.ts';
import { configureQueues, DEFAULT_QUEUE_SETTINGS, type QueueSettings } from '../../src/queue.ts';

/** Retries fast enough for a test, still through pg-boss's retry machinery. */
export const FAST_RETRIES: QueueSettings = {
  ...DEFAULT_QUEUE_SETTINGS,
  retryLimit: 2,
  retryDelay: 0,
  retryBackoff: false,
  expireInSeconds: 30,
};

export interface Producer {
  boss: PgBoss;
  send(event: { provider?: string; eventId: string; type: string; payload?: unknown }): Promise<string>;
  stop(): Promise<void>;
}

/** A pg-boss instance for sending, with the queues configured as the worker will configure them. */
export async function startProducer(pool: pg.Pool, url: string, settings = FAST_RETRIES): Promise<Producer> {
  const boss = new PgBoss({
    connectionString: url,
    max: 3,
    supervise: false,
    schedule: false,
    migrate: false,
  });
  boss.on('error', () => {});
  await boss.start();
  await configureQueues(boss, settings);
  return {
    boss,
    send: ({ provider = 'test', eventId, type, payload = {} }) =>
      ingest({ pool, boss }, { provider, eventId, type, payloadText: JSON.stringify(payload), headers: {} }),
    stop: () => boss.stop({ graceful: false, close: true }),
  };
}

export interface EffectRunRow {
  event_id: string;
  effect: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

export async function effectRuns(pool: pg.Pool, eventId: string): Promise<Record<string, EffectRunRow>> {
  const { rows } = await pool.query<EffectRunRow>(
    'select event_id, effect, status, attempts, last_error from effect_runs where event_id = $1',
    [eventId],
  );
  return Object.fromEntries(rows.map((row) => [row.effect, row]));
}

export async function eventRow(
  pool: pg.Pool,
  eventId: string,
): Promise<{ status: string; attempts: number; last_error: string | null } | undefined> {
  const { rows } = await pool.query<{ status: string; attempts: number; last_error: string | null }>(
    'select status, attempts, last_error from webhook_events where event_id = $1',
    [eventId],
  );
  return rows[0];
}

/** A table with no unique constraint: every committed run of a database effect adds a row, duplicates included. */
export async function createEffectLog(pool: pg.Pool): Promise<void> {
  await pool.query('create table if not exists effect_log (event_id text not null, effect text not null)');
}
