import os from 'node:os';
import { useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/env.ts';
import { startWorker, type Worker } from '../src/worker.ts';

// The worker's operations: the retention purge and (with STRIPE_API_KEY) the reconciliation run on pg-boss
// schedules; RETENTION_KEY_DAYS below 7 is refused at start-up.

const db = useTestDatabase();
let worker: Worker | undefined;
afterAll(async () => {
  await worker?.close();
});

describe('scheduled operations', () => {
  it('schedules the retention purge and the Stripe reconciliation', async () => {
    worker = await startWorker(
      parseConfig({
        DATABASE_URL: db.url,
        WORKER_PORT: '0',
        MAIL_DIR: os.tmpdir(),
        LOG_LEVEL: 'silent',
        RETENTION_CRON: '5 4 * * *',
        STRIPE_API_KEY: 'sk_test_scheduled',
        RECONCILE_CRON: '*/15 * * * *',
      }),
    );
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; cron: string; data: unknown }>(
        'select name, cron, data from pgboss.schedule order by name',
      );
      expect(rows).toEqual([
        { name: 'webhook-inbox-purge', cron: '5 4 * * *', data: { payloadDays: 30, keyDays: 90 } },
        { name: 'webhook-inbox-reconcile-stripe', cron: '*/15 * * * *', data: {} },
      ]);
    } finally {
      await client.end();
    }
  });

  it('refuses a key retention under 7 days', () => {
    expect(() => parseConfig({ DATABASE_URL: db.url, RETENTION_KEY_DAYS: '3' })).toThrow(
      /RETENTION_KEY_DAYS/,
    );
  });
});
