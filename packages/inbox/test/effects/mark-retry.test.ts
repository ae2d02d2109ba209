/**
 * An external effect (an email) happened, and the database connection fails right before it is marked done.
 * The worker reaches PostgreSQL through a TCP proxy that the test cuts (every connection reset, new ones
 * refused) at that exact step. The mark is retried on new connections until the database is back, so the
 * email is not sent again; but only for connection failures, never past the job's expiry, and not through a
 * shutdown.
 */
import { useTestDatabase, waitFor, type TcpProxy } from '@webhook-inbox/testing';
import type pg from 'pg';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInbox, type InboxWorker } from '../../src/inbox.ts';
import { configureQueues, type QueueSettings } from '../../src/queue.ts';
import {
  effectRuns,
  eventRow,
  FAST_RETRIES,
  useProxiedWorkerHarness,
  type Producer,
} from '../support/harness.ts';
import { external } from '../../src/effects/types.ts';

const db = useTestDatabase();
const harness = useProxiedWorkerHarness(() => db.url);
let pool: pg.Pool;
let producer: Producer;
let proxy: TcpProxy;
const timers: NodeJS.Timeout[] = [];

/** Appears in every payload: it must never be in a log line. */
const SECRET = 'payload-secret-do-not-log@example.test';

beforeAll(() => {
  ({ pool, producer, proxy } = harness);
});
// Runs before the harness's hooks: no cut is left pending when the proxy is restored and the workers stop.
afterEach(async () => {
  for (const timer of timers.splice(0)) clearTimeout(timer);
  await configureQueues(producer.boss, FAST_RETRIES);
});

interface LogLine {
  level: number;
  msg: string;
  time: number;
  attempt?: number;
  err?: { message?: string; code?: string };
}

/**
 * A worker behind the proxy (or, `direct`, not) whose `email` effect counts its sends; `atMark` runs between the
 * send and the mark (the proxy is cut there): as the effect's last step, after which the runner marks it done.
 * The email is once per `payload.account` when the event has one.
 */
async function startWorker(options: {
  queue?: QueueSettings;
  atMark: () => Promise<void> | void;
  direct?: boolean;
}): Promise<{ worker: InboxWorker; sends: string[]; lines: LogLine[] }> {
  const sends: string[] = [];
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  const inbox = createInbox({ logger }).on('test', 'signup', {
    email: external({
      scope: (event) => (event.payload as { account?: string }).account,
      run: async ({ event }) => {
        sends.push(event.eventId);
        await options.atMark();
      },
    }),
  });
  const queue = options.queue ?? FAST_RETRIES;
  const worker = await harness.start(inbox, {
    ...(options.direct ? { connectionString: db.url } : {}),
    queue,
    superviseIntervalSeconds: 1,
    poolSize: 4,
  });
  // The jobs sent from now on get this queue's expiry.
  await configureQueues(producer.boss, queue);
  return { worker, sends, lines };
}

/** Cuts the proxy the first time only, for `ms`. */
function outageOnce(ms: number): { atMark: () => Promise<void>; cutAt: () => number | undefined } {
  let cutAt: number | undefined;
  return {
    atMark: async () => {
      if (cutAt !== undefined) return;
      cutAt = Date.now();
      await proxy.cut();
      if (Number.isFinite(ms)) timers.push(setTimeout(() => void proxy.restore(), ms));
    },
    cutAt: () => cutAt,
  };
}

const markRetries = (lines: LogLine[]) =>
  lines.filter((line) => line.msg === 'could not mark the effect done (database connection); retrying');

describe('marking an external effect done through a database outage', () => {
  it('retries the mark until the database is back: the email is sent once, the job is not retried', async () => {
    const outage = outageOnce(3_000);
    const { sends, lines } = await startWorker({ atMark: outage.atMark });

    await producer.send({ eventId: 'evt_mark_outage', type: 'signup', payload: { email: SECRET } });
    await waitFor(async () => (await eventRow(pool, 'evt_mark_outage'))?.status === 'processed', {
      timeout: 30_000,
      message: 'evt_mark_outage processed',
    });

    expect(sends).toEqual(['evt_mark_outage']);
    expect(await eventRow(pool, 'evt_mark_outage')).toMatchObject({ status: 'processed', attempts: 1 });
    expect((await effectRuns(pool, 'evt_mark_outage')).email).toMatchObject({
      status: 'completed',
      attempts: 1,
    });
    // One warning per failed attempt, for about as long as the outage, at warn level, naming the error only.
    const retries = markRetries(lines);
    expect(retries.length).toBeGreaterThanOrEqual(3);
    expect(retries.map((line) => line.attempt)).toEqual(retries.map((_, i) => i + 1));
    expect(retries.every((line) => line.level === 40)).toBe(true);
    // It landed once the database was back, 3 s after the cut.
    const marked = lines.find((line) => line.msg === 'effect marked done after the database came back');
    expect(marked!.time - outage.cutAt()!).toBeGreaterThanOrEqual(2_900);
    expect(lines.some((line) => line.msg === 'effect failed')).toBe(false);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  it('another event of the same account waits for a claim whose mark is still being retried: one email', async () => {
    // The cut ends worker A's sessions; A is still alive, retrying its mark. Worker B, not behind the proxy, gets
    // the same account's next event meanwhile. The key's claim holds it until A's job expires, so B waits instead
    // of sending again, and finds it done.
    const outage = outageOnce(3_000);
    const a = await startWorker({ atMark: outage.atMark });
    await producer.send({ eventId: 'evt_claim_a', type: 'signup', payload: { account: 'acct_claim' } });
    await waitFor(() => markRetries(a.lines).length > 0, { timeout: 20_000, message: 'A retrying its mark' });

    const b = await startWorker({ atMark: () => {}, direct: true });
    await producer.send({ eventId: 'evt_claim_b', type: 'signup', payload: { account: 'acct_claim' } });
    for (const eventId of ['evt_claim_a', 'evt_claim_b']) {
      await waitFor(async () => (await eventRow(pool, eventId))?.status === 'processed', {
        timeout: 30_000,
        message: `${eventId} processed`,
      });
    }

    expect(a.sends).toEqual(['evt_claim_a']);
    expect(b.sends).toEqual([]);
    expect(b.lines.some((line) => line.msg.startsWith('effect claimed by another attempt'))).toBe(true);
    // Neither needed a second attempt; B's effect completed without running, under the account's key.
    expect(await eventRow(pool, 'evt_claim_b')).toMatchObject({ status: 'processed', attempts: 1 });
    expect((await effectRuns(pool, 'evt_claim_b')).email).toMatchObject({ status: 'completed' });
    const { rows } = await pool.query<{ status: string; attempts: number; event_id: string }>(
      `select status, attempts, event_id from idempotency_keys where effect = 'email' and event_id like 'evt_claim_%'`,
    );
    expect(rows).toEqual([{ status: 'completed', attempts: 1, event_id: 'evt_claim_a' }]);
  });

  it('does not retry a mark that fails for another reason than the connection', async () => {
    // The mark's update of the ledger row raises, on this event only.
    await pool.query(`
      create or replace function refuse_mark() returns trigger language plpgsql as $$
        begin raise exception 'mark refused by test trigger'; end $$;
      create trigger refuse_mark before update on effect_runs for each row
        when (new.event_id = 'evt_mark_refused' and old.status = 'running' and new.status = 'completed')
        execute function refuse_mark();
    `);
    try {
      const { sends, lines } = await startWorker({ atMark: () => {} });
      await producer.send({ eventId: 'evt_mark_refused', type: 'signup' });
      await waitFor(async () => (await eventRow(pool, 'evt_mark_refused'))?.status === 'dead', {
        timeout: 30_000,
        message: 'evt_mark_refused dead',
      });
      // Each attempt sent and failed at once; none waited on the mark.
      expect(sends).toHaveLength(FAST_RETRIES.retryLimit + 1);
      expect(markRetries(lines)).toEqual([]);
      expect((await eventRow(pool, 'evt_mark_refused'))?.last_error).toContain(
        'mark refused by test trigger',
      );
    } finally {
      await pool.query('drop trigger refuse_mark on effect_runs');
    }
  });

  it("gives up before the job's expiry, so another attempt never meets a mark still being retried", async () => {
    const outage = outageOnce(Number.POSITIVE_INFINITY);
    const expireInSeconds = 4;
    const { sends, lines } = await startWorker({
      queue: { ...FAST_RETRIES, expireInSeconds },
      atMark: outage.atMark,
    });
    await producer.send({ eventId: 'evt_mark_expiry', type: 'signup' });
    await waitFor(() => lines.some((line) => line.msg === 'effect failed'), {
      timeout: 20_000,
      message: 'the mark given up',
    });
    const gaveUp = lines.find((line) => line.msg === 'effect failed')!.time;
    const retries = markRetries(lines);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    // The job started before the cut: it expires less than 4 s after it; the mark stopped 1 s before that.
    expect(gaveUp - outage.cutAt()!).toBeLessThan(expireInSeconds * 1000 - 500);
    expect(retries.at(-1)!.time).toBeLessThanOrEqual(gaveUp);

    // The database comes back: the next attempt sends again (the email's one known duplicate), then completes.
    await proxy.restore();
    await waitFor(async () => (await eventRow(pool, 'evt_mark_expiry'))?.status === 'processed', {
      timeout: 30_000,
      message: 'evt_mark_expiry processed',
    });
    expect(sends).toEqual(['evt_mark_expiry', 'evt_mark_expiry']);
  });

  it('stops retrying when the worker is stopped', async () => {
    const outage = outageOnce(Number.POSITIVE_INFINITY);
    const { worker, lines } = await startWorker({ atMark: outage.atMark });
    await producer.send({ eventId: 'evt_mark_shutdown', type: 'signup' });
    await waitFor(() => markRetries(lines).length >= 2, { timeout: 20_000, message: 'mark retries' });

    let stopped = false;
    void worker.stop({ timeoutMs: 500 }).then(() => (stopped = true));
    // The stop ends the pool, which waits for the mark's connection: it returns once the mark has given up. The
    // deadline is well inside the 30 s the mark would otherwise keep trying.
    await waitFor(() => stopped, { timeout: 20_000, message: 'the worker stopped, its mark given up' });
    const count = markRetries(lines).length;
    // The mark's loop has ended (its effect failed), and no retry came after the pool's end.
    await waitFor(() => lines.some((line) => line.msg === 'effect failed'), {
      timeout: 20_000,
      message: 'the effect failed, its mark given up',
    });
    expect(markRetries(lines).length).toBe(count);
  });
});
