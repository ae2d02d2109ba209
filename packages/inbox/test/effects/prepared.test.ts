/**
 * The statements the runner sends for a batch (an attempt's start, the database effects' claims, the external
 * effects' claims and marks, the attempt rows, the settlement) are named: a connection parses and plans each once
 * and runs it again by name in every later batch.
 */
import { createDb, createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EffectRegistry } from '../../src/effects/registry.ts';
import { EffectRunner } from '../../src/effects/runner.ts';
import { external } from '../../src/effects/types.ts';
import {
  createEffectLog,
  effectRuns,
  job,
  logged,
  startProducer,
  type Producer,
} from '../support/harness.ts';

const db = useTestDatabase();
let pool: pg.Pool;
let producer: Producer;
// The runner's pool: one connection, so every statement of every batch goes through it.
let runnerPool: pg.Pool;

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 3 });
  await createEffectLog(pool);
  producer = await startProducer(pool, db.url);
  runnerPool = createPool({ connectionString: db.url, max: 1 });
});
afterAll(async () => {
  await producer.stop();
  await runnerPool.end();
  await pool.end();
});

it('runs every ledger statement of a batch as a statement prepared once on its connection', async () => {
  const notified: string[] = [];
  const registry = new EffectRegistry();
  registry.add('test', ['order'], {
    record: logged('record'),
    notify: external<{ eventId: string }>({ run: ({ event }) => void notified.push(event.eventId) }),
  });
  const runner = new EffectRunner({
    pool: runnerPool,
    db: createDb(runnerPool),
    registry,
    logger: pino({ level: 'silent' }),
  });
  for (const batch of [
    ['evt_prep_1', 'evt_prep_2'],
    ['evt_prep_3', 'evt_prep_4'],
  ]) {
    for (const eventId of batch) await producer.send({ eventId, type: 'order' });
    expect(await runner.runBatch(batch.map(job))).toEqual(
      batch.map((eventId) => ({ id: `job-${eventId}`, status: 'completed' })),
    );
  }
  expect(notified).toEqual(['evt_prep_1', 'evt_prep_2', 'evt_prep_3', 'evt_prep_4']);
  expect((await effectRuns(pool, 'evt_prep_4')).record).toMatchObject({ status: 'completed', attempts: 1 });

  const { rows } = await runnerPool.query<{ name: string; calls: number }>(
    `select name, (generic_plans + custom_plans)::int as calls from pg_prepared_statements order by name`,
  );
  expect(rows.map((r) => r.name)).toEqual([
    'webhook_inbox_claim_database_effects',
    'webhook_inbox_claim_external',
    'webhook_inbox_complete_externals',
    'webhook_inbox_insert_attempts',
    'webhook_inbox_settle_events',
    'webhook_inbox_start_attempts',
  ]);
  // Prepared in the first batch, run again by name in the second (the marks of a batch may take two statements).
  for (const { name, calls } of rows) expect({ name, calls: Math.min(calls, 2) }).toEqual({ name, calls: 2 });
});
