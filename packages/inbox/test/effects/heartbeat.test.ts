/**
 * Heartbeats: a worker that holds a job writes its heartbeat, and its external effects' claims follow the same
 * lease. One that goes silent (died, froze) loses its jobs and its keys after one heartbeat, long before the
 * job's expiry; one that is alive keeps both, however long its effect runs.
 */
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox.ts';
import { configureQueues, EVENTS_QUEUE, type EventJob, type QueueSettings } from '../../src/queue.ts';
import { eventRow, FAST_RETRIES, useWorkerHarness } from '../support/harness.ts';
import { claimLeaseMs } from '../../src/effects/external-effects.ts';
import { scopedIdempotencyKey } from '../../src/effects/keys.ts';
import { claimExternalEffects } from '../../src/sql/idempotency-keys.ts';
import { startAttempts } from '../../src/sql/ledger.ts';
import { external } from '../../src/effects/types.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);
let pool: pg.Pool;

/** Production's expiry and heartbeat: only the heartbeat can bring a silent worker's job back within a test. */
const QUEUE: QueueSettings = { ...FAST_RETRIES, expireInSeconds: 300, heartbeatSeconds: 10 };

beforeAll(async () => {
  pool = harness.pool;
  await configureQueues(harness.producer.boss, QUEUE);
});
afterAll(async () => {
  await configureQueues(harness.producer.boss, FAST_RETRIES);
});

const welcomeKey = (account: string) => scopedIdempotencyKey('welcome', `account:${account}`);

async function keyRow(key: string): Promise<{ status: string; attempts: number; leftMs: number }> {
  const { rows } = await pool.query<{ status: string; attempts: number; left_ms: number }>(
    `select status, attempts, (extract(epoch from claim_expires_at - now()) * 1000)::int as left_ms
       from idempotency_keys where key = $1`,
    [key],
  );
  const row = rows[0]!;
  return { status: row.status, attempts: row.attempts, leftMs: row.left_ms };
}

async function jobOf(eventId: string): Promise<{ retryCount: number; state: string; beats: boolean }> {
  const { rows } = await pool.query<{ retry_count: number; state: string; beats: boolean }>(
    `select retry_count, state::text, heartbeat_on > started_on as beats from pgboss.job
      where name = $1 and data->>'eventId' = $2`,
    [EVENTS_QUEUE, eventId],
  );
  const row = rows[0]!;
  return { retryCount: row.retry_count, state: row.state, beats: row.beats };
}

function signupInbox(sends: string[], run: () => Promise<void> = async () => {}, settings: string[] = []) {
  return createInbox({ logger: pino({ level: 'silent' }) }).on('test', 'signup', {
    record: async ({ tx }) => {
      const { rows } = await tx.execute<{ idle_in_transaction_session_timeout: string }>(
        sql`show idle_in_transaction_session_timeout`,
      );
      settings.push(rows[0]!.idle_in_transaction_session_timeout);
    },
    welcome: external<{ eventId: string; payload: unknown }>({
      scope: ({ payload }) => `account:${(payload as { account: string }).account}`,
      run: async ({ event }) => {
        sends.push(event.eventId);
        await run();
      },
    }),
  });
}

describe('heartbeats', () => {
  it('claims an external effect for its job heartbeat, or its expiry when that is shorter', () => {
    expect(claimLeaseMs({ heartbeatSeconds: 10, expireInSeconds: 300 })).toBe(10_000);
    expect(claimLeaseMs({ heartbeatSeconds: 10, expireInSeconds: 3 })).toBe(3_000);
    expect(claimLeaseMs({ heartbeatSeconds: null, expireInSeconds: 300 })).toBe(300_000);
  });

  it("a worker gone silent holding a job and an email's claim: both are taken over after one heartbeat", async () => {
    await harness.producer.send({
      eventId: 'evt_silent',
      type: 'signup',
      payload: { account: 'acct_silent' },
    });
    // The silent worker: it fetched the job, started the attempt and claimed the email's key, then stopped.
    const [job] = await harness.producer.boss.fetch<EventJob>(EVENTS_QUEUE, { includeMetadata: true });
    expect(job).toMatchObject({
      data: { eventId: 'evt_silent' },
      heartbeatSeconds: 10,
      expireInSeconds: 300,
    });
    await pool.query(startAttempts([job!.data]));
    const ref = { provider: 'test', eventId: 'evt_silent', effect: 'welcome' };
    await pool.query(
      claimExternalEffects([
        { ...ref, idempotencyKey: welcomeKey('acct_silent'), leaseMs: claimLeaseMs(job!) },
      ]),
    );
    expect(await keyRow(welcomeKey('acct_silent'))).toMatchObject({ status: 'claimed', attempts: 1 });

    const sends: string[] = [];
    await harness.start(signupInbox(sends), { queue: QUEUE, superviseIntervalSeconds: 1 });
    // Well within the job's 300 s expiry: the heartbeat (10 s), a supervision (1 s), the fetch (0.5 s).
    await waitFor(async () => (await eventRow(pool, 'evt_silent'))?.status === 'processed', {
      timeout: 30_000,
      message: 'the silent worker’s event processed by another worker',
    });
    expect(sends).toEqual(['evt_silent']);
    // The worker settles the event, then pg-boss completes its job: under load the second comes a moment later.
    await waitFor(async () => (await jobOf('evt_silent')).state === 'completed', {
      timeout: 15_000,
      message: 'the taken-over job completed',
    });
    expect(await jobOf('evt_silent')).toMatchObject({ retryCount: 1, state: 'completed' });
    // The claim was taken over (its lease had run out), not waited for.
    expect(await keyRow(welcomeKey('acct_silent'))).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('a live worker whose email outlasts the heartbeat keeps its job and its claim, and sends once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sends: string[] = [];
    const settings: string[] = [];
    await harness.start(
      signupInbox(sends, () => held, settings),
      { queue: QUEUE, superviseIntervalSeconds: 1 },
    );
    await harness.producer.send({ eventId: 'evt_slow', type: 'signup', payload: { account: 'acct_slow' } });
    // The send runs past a whole heartbeat and more, by the database's clock; meanwhile the job's heartbeat and
    // the claim's lease keep moving.
    await waitFor(
      async () => {
        const { rows } = await pool.query<{ n: number }>(
          `select count(*)::int as n from pgboss.job
            where name = $1 and data->>'eventId' = 'evt_slow' and state = 'active'
              and started_on < now() - interval '13 seconds'`,
          [EVENTS_QUEUE],
        );
        return rows[0]!.n === 1;
      },
      { timeout: 40_000, interval: 250, message: 'the email still being sent 13 s after its job started' },
    );
    const job = await jobOf('evt_slow');
    const key = await keyRow(welcomeKey('acct_slow'));
    release();
    await waitFor(async () => (await eventRow(pool, 'evt_slow'))?.status === 'processed', {
      timeout: 15_000,
      message: 'evt_slow processed',
    });

    expect(job).toMatchObject({ retryCount: 0, state: 'active', beats: true });
    // Renewed: the lease (10 s) would have run out 3 s ago without it.
    expect(key).toMatchObject({ status: 'claimed', attempts: 1 });
    expect(key.leftMs).toBeGreaterThan(0);
    expect(sends).toEqual(['evt_slow']);
    expect(await eventRow(pool, 'evt_slow')).toMatchObject({ status: 'processed', attempts: 1 });
    // An effect transaction idle for a whole heartbeat is ended by the server (a frozen worker's locks go).
    expect(settings).toEqual(['10s']);
  });
});
