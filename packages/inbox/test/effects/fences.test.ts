/**
 * Leases are fences: an attempt that lost its claim of an external effect (its worker froze past the lease, and
 * another attempt took the key) or its event (another attempt of the event started) runs nothing, and writes
 * nothing over the new holder's rows. Each test names what happened before the fences.
 */
import { Writable } from 'node:stream';
import { createDb } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as idempotencyKeys from '../../src/sql/idempotency-keys.ts';
import { runDatabaseEffects } from '../../src/effects/database-effects.ts';
import { scopedIdempotencyKey } from '../../src/effects/keys.ts';
import { Lease, LOST_ON_RENEWAL } from '../../src/effects/lease.ts';
import { startAttempts, type LoadedEventRow } from '../../src/sql/ledger.ts';
import type { Job, Outcome, Task } from '../../src/effects/task.ts';
import { external, LeaseLostError } from '../../src/effects/types.ts';
import { createInbox } from '../../src/inbox.ts';
import { configureQueues, type QueueSettings } from '../../src/queue.ts';
import { effectRuns, eventRow, FAST_RETRIES, useWorkerHarness } from '../support/harness.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);
let pool: pg.Pool;
const silent = pino({ level: 'silent' });

/** Production's heartbeat: a claim's lease is 10 s, renewed every 3.3 s. */
const QUEUE: QueueSettings = { ...FAST_RETRIES, expireInSeconds: 300, heartbeatSeconds: 10 };

beforeAll(async () => {
  pool = harness.pool;
  await configureQueues(harness.producer.boss, QUEUE);
});
afterAll(async () => {
  await configureQueues(harness.producer.boss, FAST_RETRIES);
});

async function recordEvent(eventId: string): Promise<void> {
  await pool.query(
    `insert into webhook_events (provider, event_id, type, headers, source) values ('test', $1, 'signup', '{}', 'webhook')`,
    [eventId],
  );
}

async function keyRow(key: string) {
  const { rows } = await pool.query<{ status: string; attempts: number; claim_token: string }>(
    'select status, attempts, claim_token::text from idempotency_keys where key = $1',
    [key],
  );
  return rows[0];
}

/** Another attempt's takeover of a claim whose lease ran out: what a frozen worker's key goes through. */
async function takeOver(ref: idempotencyKeys.ExternalEffectRef): Promise<idempotencyKeys.ClaimFence> {
  await pool.query(
    `update idempotency_keys set claim_expires_at = now() - interval '1 second' where key = $1`,
    [ref.idempotencyKey],
  );
  const [row] = (
    await pool.query<idempotencyKeys.ExternalClaimRow>(idempotencyKeys.claimExternalEffects([ref]))
  ).rows;
  expect(row).toMatchObject({ prior_status: 'claimed', run_claimed: true });
  return { keyAttempts: row!.key_attempts!, token: row!.claim_token! };
}

it("refuses a thawed attempt's call once another attempt took its claim; its marks change nothing (was: the call went ahead, and its mark completed the new holder's claim)", async () => {
  await recordEvent('evt_fence_1');
  await recordEvent('evt_fence_2');
  const key = scopedIdempotencyKey('welcome', 'account:acct_fence');
  const ref = (eventId: string) => ({
    provider: 'test',
    eventId,
    effect: 'welcome',
    idempotencyKey: key,
    leaseMs: 10_000,
  });
  const sentAt = performance.now();
  const [first] = (
    await pool.query<idempotencyKeys.ExternalClaimRow>(
      idempotencyKeys.claimExternalEffects([ref('evt_fence_1')]),
    )
  ).rows;
  const frozen = { keyAttempts: first!.key_attempts!, token: first!.claim_token! };
  // Within half its lease by this process's clock, the claim is proven without asking the database.
  await new Lease(pool, ref('evt_fence_1'), frozen, 10_000, sentAt, silent).hold();

  const taker = await takeOver(ref('evt_fence_2'));
  // The frozen worker's clock: the lease's whole length has passed since it sent its claim.
  const thawed = new Lease(pool, ref('evt_fence_1'), frozen, 10_000, sentAt - 10_000, silent);
  await expect(thawed.hold()).rejects.toBeInstanceOf(LeaseLostError);
  await expect(thawed.hold()).rejects.toMatchObject({ code: 'lease_lost' });
  // Its mark, its failure and its release change nothing: the key is the taker's, claimed.
  for (const statement of [
    idempotencyKeys.completeExternalEffect(ref('evt_fence_1'), frozen),
    idempotencyKeys.failExternalEffect(ref('evt_fence_1'), frozen, 'boom'),
    idempotencyKeys.releaseClaim(ref('evt_fence_1'), frozen),
  ]) {
    expect((await pool.query(statement)).rowCount).toBe(0);
  }
  expect(await keyRow(key)).toEqual({ status: 'claimed', attempts: 2, claim_token: taker.token });
  expect(await effectRuns(pool, 'evt_fence_1')).toMatchObject({ welcome: { status: 'running' } });
  // The taker holds it, through the database too.
  await new Lease(pool, ref('evt_fence_2'), taker, 10_000, sentAt - 10_000, silent).hold();
  expect((await pool.query(idempotencyKeys.completeExternalEffect(ref('evt_fence_2'), taker))).rowCount).toBe(
    1,
  );
  expect(await keyRow(key)).toMatchObject({ status: 'completed' });
});

it('does not send an email whose claim was taken over while it waited for a connection (was: sent when it got one)', async () => {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
  );
  let release!: () => void;
  const connection = new Promise<void>((resolve) => (release = resolve));
  let waiting = false;
  const sends: string[] = [];
  const inbox = createInbox({ logger }).on('test', 'signup', {
    welcome: external<{ eventId: string; payload: unknown }>({
      scope: () => 'account:acct_wait',
      // As the SMTP mailer does: wait for a connection, prove the claim (`beforeSend`), then send.
      run: async ({ event, holdLease }) => {
        waiting = true;
        await connection;
        await holdLease();
        sends.push(event.eventId);
      },
    }),
  });
  await harness.start(inbox, { queue: QUEUE });
  await harness.producer.send({ eventId: 'evt_wait', type: 'signup', payload: {} });
  await waitFor(() => waiting, { timeout: 30_000, message: 'the email waiting for a connection' });

  const key = scopedIdempotencyKey('welcome', 'account:acct_wait');
  await recordEvent('evt_wait_other');
  const taker = await takeOver({
    provider: 'test',
    eventId: 'evt_wait_other',
    effect: 'welcome',
    idempotencyKey: key,
    leaseMs: 60_000,
  });
  // The waiting attempt's next renewal finds its claim gone.
  await waitFor(() => lines.some((line) => line.includes(LOST_ON_RENEWAL)), {
    timeout: 30_000,
    message: 'the renewal to find the claim taken',
  });
  release();
  // The attempt's history row, not the event's status: with no retry delay, the retry may have set the status
  // back to processing before a poll sees `failed`.
  const first = await waitFor(
    async () =>
      (
        await pool.query<{ outcome: string; error: string | null }>(
          `select outcome, error from effect_attempts where event_id = 'evt_wait' and effect = 'welcome' and attempt = 1`,
        )
      ).rows[0],
    { timeout: 30_000, message: 'the first attempt to be recorded' },
  );
  expect(sends).toEqual([]);
  expect(first.outcome).toBe('failed');
  expect(first.error).toMatch(/claim of the effect is gone/);
  // Nothing written over the taker's claim; it completes the email, and the retry finds it done.
  expect(await keyRow(key)).toEqual({ status: 'claimed', attempts: 2, claim_token: taker.token });
  await pool.query(
    idempotencyKeys.completeExternalEffect(
      { provider: 'test', eventId: 'evt_wait_other', effect: 'welcome', idempotencyKey: key },
      taker,
    ),
  );
  await waitFor(async () => (await eventRow(pool, 'evt_wait'))?.status === 'processed', {
    timeout: 60_000,
    message: 'the retry to find the email sent',
  });
  expect(sends).toEqual([]);
});

/** A database task of the event's attempt `row`, run through `runDatabaseEffects`; its outcome. */
async function runDatabaseTask(row: LoadedEventRow, body: () => Promise<void>): Promise<Outcome | undefined> {
  const job = {
    id: 'job',
    data: { provider: 'test', eventId: row.event_id },
    retryCount: 0,
  } as unknown as Job;
  const task: Task = {
    run: {
      job,
      expiresAt: Infinity,
      permanent: false,
      tasks: [],
      receivedAt: row.received_at,
      attempt: row.attempts,
    },
    event: {
      provider: 'test',
      eventId: row.event_id,
      type: 'signup',
      headers: {},
      receivedAt: row.received_at,
      payload: {},
    },
    effect: { name: 'record', kind: 'database', run: body, scope: undefined },
    ref: {
      provider: 'test',
      eventId: row.event_id,
      effect: 'record',
      idempotencyKey: `test:${row.event_id}:record`,
      scoped: false,
    },
  };
  await runDatabaseEffects(
    {
      group: 'default',
      pool,
      db: createDb(pool),
      transactionSettings: undefined,
      log: silent,
      finish: (t, outcome) => (t.outcome = outcome),
    },
    [task],
  );
  return task.outcome;
}

it('does not run a database effect of an attempt another attempt took over; nothing commits (was: run and committed)', async () => {
  await recordEvent('evt_fence_db');
  const key = { provider: 'test', eventId: 'evt_fence_db' };
  const [mine] = (await pool.query<LoadedEventRow>(startAttempts([key]))).rows;
  // This worker froze; its job was retried elsewhere, whose attempt started.
  await pool.query(startAttempts([key]));
  let ran = false;
  const outcome = await runDatabaseTask(mine!, () => Promise.resolve(void (ran = true)));
  expect(outcome).toBeInstanceOf(LeaseLostError);
  expect(ran).toBe(false);
  // No ledger row: neither completed nor a failure over the new attempt's.
  expect(await effectRuns(pool, 'evt_fence_db')).toEqual({});
});

it("no attempt of an event starts while a database effect's transaction holds its fence (was: one started mid-transaction)", async () => {
  await recordEvent('evt_fence_tx');
  const key = { provider: 'test', eventId: 'evt_fence_tx' };
  const [mine] = (await pool.query<LoadedEventRow>(startAttempts([key]))).rows;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let inside = false;
  const running = runDatabaseTask(mine!, async () => {
    inside = true;
    await held;
  });
  await waitFor(() => inside, { timeout: 30_000, message: 'the effect inside its transaction' });
  let started = false;
  const takeover = pool.query(startAttempts([key])).then(() => (started = true));
  // The takeover waits for the fence's lock.
  await waitFor(
    async () =>
      (
        await pool.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%webhook_events%'`,
        )
      ).rows[0]!.n > 0,
    { timeout: 30_000, message: 'the takeover waiting for the lock' },
  );
  expect(started).toBe(false);
  release();
  expect(await running).toBe('completed');
  await takeover;
  expect(await effectRuns(pool, 'evt_fence_tx')).toMatchObject({ record: { status: 'completed' } });
  // The new attempt sees the effect completed: it will not run it again.
  const { rows } = await pool.query<LoadedEventRow>(startAttempts([key]));
  expect(rows[0]!.completed).toEqual(['record']);
});
