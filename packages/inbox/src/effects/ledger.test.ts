import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAttempts } from './ledger.ts';

const db = useTestDatabase();
let pool: pg.Pool;

beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: 2 });
});
afterAll(() => pool?.end());

async function statusOf(eventId: string): Promise<{ status: string; attempts: number }> {
  const { rows } = await pool.query<{ status: string; attempts: number }>(
    `select status, attempts from webhook_events where provider = 'stripe' and event_id = $1`,
    [eventId],
  );
  return rows[0]!;
}

it('starting an attempt makes an event processing, but a late attempt leaves a processed event processed', async () => {
  for (const [eventId, status] of [
    ['evt_ledger_processed', 'processed'],
    ['evt_ledger_failed', 'failed'],
    ['evt_ledger_received', 'received'],
  ] as const) {
    await pool.query(
      `insert into webhook_events (provider, event_id, type, payload, headers, source, status, attempts)
       values ('stripe', $1, 'checkout.session.completed', '{}'::jsonb, '{}'::jsonb, 'webhook', $2, 1)`,
      [eventId, status],
    );
  }
  const keys = ['evt_ledger_processed', 'evt_ledger_failed', 'evt_ledger_received'].map((eventId) => ({
    provider: 'stripe',
    eventId,
  }));
  const { rows } = await pool.query(startAttempts(keys));
  expect(rows).toHaveLength(3);

  // A late attempt of a job another worker already completed: it must not leave the event `processing` for good.
  expect(await statusOf('evt_ledger_processed')).toEqual({ status: 'processed', attempts: 2 });
  expect(await statusOf('evt_ledger_failed')).toEqual({ status: 'processing', attempts: 2 });
  expect(await statusOf('evt_ledger_received')).toEqual({ status: 'processing', attempts: 2 });
});
