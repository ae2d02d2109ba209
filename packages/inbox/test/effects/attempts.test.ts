import { hostname } from 'node:os';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { eventRow, useWorkerHarness } from '../support/harness.ts';
import { createInbox } from '../../src/inbox.ts';
import { purgeExpired } from '@webhook-inbox/operator/retention';
import { writeAttempts } from '../../src/effects/attempts.ts';
import { insertAttempts, type AttemptRecord } from '../../src/sql/effect-attempts.ts';

// The attempt history: one row per attempt of each effect, written by a real worker, bounded, purged with events.

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);

interface AttemptDbRow {
  effect: string;
  attempt: number;
  outcome: string;
  error: string | null;
  worker: string;
  job_id: string | null;
  duration_ms: number;
  started_at: Date;
  finished_at: Date;
}

async function attempts(eventId: string): Promise<AttemptDbRow[]> {
  const { rows } = await harness.pool.query<AttemptDbRow>(
    `select effect, attempt, outcome, error, worker, job_id, duration_ms, started_at, finished_at
       from effect_attempts where event_id = $1 order by effect, attempt`,
    [eventId],
  );
  return rows;
}

async function jobIds(eventId: string): Promise<string[]> {
  const { rows } = await harness.pool.query<{ id: string }>(
    `select id::text from pgboss.job where data->>'eventId' = $1`,
    [eventId],
  );
  return rows.map((row) => row.id);
}

/** A processed event of provider `test` to hang attempt rows on. */
async function recordEvent(eventId: string): Promise<void> {
  await harness.pool.query(
    `insert into webhook_events (provider, event_id, type, status) values ('test', $1, 'race', 'processed')`,
    [eventId],
  );
}

/** A completed attempt (of `destination.crm` unless `fields` say otherwise), as a worker reports it. */
function attemptRecord(eventId: string, fields: Partial<AttemptRecord>): AttemptRecord {
  return {
    provider: 'test',
    eventId,
    effect: 'destination.crm',
    startedAt: new Date(),
    finishedAt: new Date(),
    durationMs: 1,
    outcome: 'completed',
    error: null,
    worker: 'host/1',
    jobId: null,
    ...fields,
  };
}

/**
 * Writes `held` in a transaction left open, runs `write` until it waits on that row's lock (seen in
 * pg_stat_activity), then commits the transaction and waits for `write`: the race of two writers of one
 * effect's attempts, in a fixed order.
 */
async function whileAnAttemptIsHeld(held: AttemptRecord, write: () => Promise<void>): Promise<void> {
  const holder = await harness.pool.connect();
  try {
    await holder.query('begin');
    await holder.query(insertAttempts([held]));
    const written = write();
    await waitFor(
      async () =>
        (
          await harness.pool.query(
            `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%effect_attempts%'`,
          )
        ).rowCount === 1,
      { timeout: 10_000, message: 'a write waiting on the held attempt row' },
    );
    await holder.query('commit');
    await written;
  } finally {
    holder.release();
  }
}

/** The event's attempt rows as [number, error], in number order. */
async function numbered(eventId: string): Promise<[number, string][]> {
  const { rows } = await harness.pool.query<{ attempt: number; error: string }>(
    `select attempt, error from effect_attempts where event_id = $1 order by attempt`,
    [eventId],
  );
  return rows.map((row) => [row.attempt, row.error]);
}

describe('effect_attempts', () => {
  it('keeps a failed attempt with its database cause, then the attempt that completed', async () => {
    await harness.pool.query('create table if not exists flaky_once (event_id text primary key)');
    await harness.start(
      createInbox().on('test', 'flaky.once', {
        recordFlaky: async ({ event, tx }) => {
          // Fails its first attempt: the row it reads is written (outside the rolled-back transaction) then.
          const seen = await tx.execute(sql`select 1 from flaky_once where event_id = ${event.eventId}`);
          if (seen.rows.length === 0) {
            await harness.pool.query('insert into flaky_once values ($1)', [event.eventId]);
            await tx.execute(sql`select 1 / 0 where ${event.eventId} <> ''`);
          }
        },
      }),
    );
    await harness.producer.send({ eventId: 'evt_flaky', type: 'flaky.once' });
    await waitFor(async () => (await eventRow(harness.pool, 'evt_flaky'))?.status === 'processed', {
      timeout: 30_000,
      message: 'evt_flaky processed on its second attempt',
    });

    const rows = await attempts('evt_flaky');
    expect(rows.map((r) => [r.effect, r.attempt, r.outcome])).toEqual([
      ['recordFlaky', 1, 'failed'],
      ['recordFlaky', 2, 'completed'],
    ]);
    const [failed, completed] = rows;
    expect(failed?.error).toBe('division by zero (22012)');
    expect(failed?.error).not.toContain('evt_flaky');
    expect(completed?.error).toBeNull();
    for (const row of rows) {
      expect(row.worker).toBe(`${hostname()}/${process.pid}`);
      expect(await jobIds('evt_flaky')).toContain(row.job_id);
      expect(row.finished_at.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
    }
  });

  it("marks the last attempt of an event that goes dead as 'dead'", async () => {
    await harness.start(
      createInbox().on('test', 'always.fails', {
        alwaysFails: () => Promise.reject(new Error('the downstream API refused the request')),
      }),
    );
    await harness.producer.send({ eventId: 'evt_always', type: 'always.fails' });
    await waitFor(async () => (await eventRow(harness.pool, 'evt_always'))?.status === 'dead', {
      timeout: 30_000,
      message: 'evt_always dead after its retries',
    });
    await waitFor(async () => (await attempts('evt_always')).length === 3, {
      timeout: 10_000,
      message: 'three attempts recorded',
    });
    const rows = await attempts('evt_always');
    expect(rows.map((r) => r.outcome)).toEqual(['failed', 'failed', 'dead']);
    expect(new Set(rows.map((r) => r.error))).toEqual(new Set(['the downstream API refused the request']));
  });

  it('keeps the first attempt and the last N of an effect', async () => {
    await harness.pool.query(
      `insert into webhook_events (provider, event_id, type, status) values ('test', 'evt_many', 'many', 'failed')`,
    );
    const record = (i: number): AttemptRecord => ({
      provider: 'test',
      eventId: 'evt_many',
      effect: 'manyTimes',
      startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
      finishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i, 5)),
      durationMs: 5,
      outcome: 'failed',
      error: `failure ${i}`,
      worker: 'host/1',
      jobId: null,
    });
    for (let i = 1; i <= 10; i++) await harness.pool.query(insertAttempts([record(i)], 3));
    expect((await attempts('evt_many')).map((r) => [r.attempt, r.error])).toEqual([
      [1, 'failure 1'],
      [8, 'failure 8'],
      [9, 'failure 9'],
      [10, 'failure 10'],
    ]);
  });

  it("numbers an attempt after a concurrent writer's row rather than dropping it (a delivery beside its fan-out)", async () => {
    await recordEvent('evt_race');
    const record = (error: string, responseStatus: number | null) =>
      attemptRecord('evt_race', { error, responseStatus });
    // The fan-out's batch has written attempt 1 and not committed yet; the delivery reads the last number before
    // that row commits, so its own 1 waits on the batch's.
    await whileAnAttemptIsHeld(record('fan-out', null), () =>
      writeAttempts(harness.pool, [record('delivery', 204)]),
    );
    // Two records of one effect in one call: the second is numbered after the first.
    await writeAttempts(harness.pool, [record('retry 1', 500), record('retry 2', 204)]);
    expect(await numbered('evt_race')).toEqual([
      [1, 'fan-out'],
      [2, 'delivery'],
      [3, 'retry 1'],
      [4, 'retry 2'],
    ]);
  });

  it('keeps both of two records of one effect when the first loses its number, neither written twice', async () => {
    await recordEvent('evt_race2');
    const record = (error: string, ms: number) =>
      attemptRecord('evt_race2', {
        error,
        startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)),
        finishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms + 1)),
      });
    // The first record is numbered 1 and waits on the batch's uncommitted 1; the second, numbered 2, is added.
    await whileAnAttemptIsHeld(record('fan-out', 0), () =>
      writeAttempts(harness.pool, [record('first', 10), record('second', 20)]),
    );
    // The first is written again after the second (counted by effect alone, the second would be written twice
    // and the first lost).
    expect(await numbered('evt_race2')).toEqual([
      [1, 'fan-out'],
      [2, 'second'],
      [3, 'first'],
    ]);
  });

  it('writes nothing for an event that is not recorded (purged meanwhile)', async () => {
    await writeAttempts(harness.pool, [attemptRecord('evt_gone', { effect: 'x', durationMs: 0 })]);
    expect(await attempts('evt_gone')).toEqual([]);
  });

  it('is removed by retention with its event', async () => {
    await harness.pool.query(
      `insert into webhook_events (provider, event_id, type, status, received_at)
       values ('test', 'evt_old', 'old', 'dead', now() - interval '100 days'),
              ('test', 'evt_recent', 'old', 'dead', now() - interval '10 days')`,
    );
    await harness.pool.query(
      `insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms, outcome, worker)
       select 'test', id, 'oldEffect', 1, now(), now(), 1, 'dead', 'host/1' from unnest(array['evt_old', 'evt_recent']) id`,
    );
    await purgeExpired(harness.pool, { payloadDays: 30, keyDays: 90 });
    expect(await attempts('evt_old')).toEqual([]);
    expect((await attempts('evt_recent')).length).toBe(1);
  });
});
