/**
 * Scenario 6, an effect slower than its job's expiry. The workers run with WORKER_JOB_TIMEOUT_SECONDS=1, so
 * pg-boss declares the job lost after a second and another attempt starts (on either of two worker processes)
 * while the first is still running. The ledger must keep the second attempt from running the effect again:
 * - an external effect: the welcome email, on an SMTP server that holds the message until a later attempt has
 *   started (a condition, not a timer): one email, its key claimed once;
 * - a database effect: a Shopify order whose table the test keeps locked until a later attempt is waiting
 *   behind the first (a condition, not a timer): one INSERT, its ledger row written once.
 */
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpSink } from '@webhook-inbox/testing/smtp';
import { CHAOS_QUEUE, report, waitForOrExplain } from './support/cluster.ts';
import { checkout, order } from './support/events.ts';
import { snapshot } from './support/invariants.ts';
import { expectNoCrashLines, startScenario, type Scenario } from './support/scenario.ts';
import { eventStatus, queueDrained, type Producer } from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();
const EXPIRE_SECONDS = 1;

let scenario: Scenario;
let pool: pg.Pool;
let smtp: SmtpSink;
let producer: Producer;
/** What the mail server's acknowledgements wait for. */
let mailHold: Promise<void> = Promise.resolve();

beforeAll(async () => {
  scenario = await startScenario({
    databaseUrl: db.url,
    smtpHold: () => mailHold,
    producerQueue: { ...CHAOS_QUEUE, expireInSeconds: EXPIRE_SECONDS },
  });
  ({ pool, smtp, producer } = scenario);
  const env = scenario.workerEnv({ WORKER_JOB_TIMEOUT_SECONDS: String(EXPIRE_SECONDS) });
  await Promise.all([scenario.startWorker(env), scenario.startWorker(env)]);
});

afterAll(async () => {
  await scenario?.stop();
});

async function attemptsOf(eventId: string): Promise<number> {
  const { rows } = await pool.query<{ attempts: number }>(
    'select attempts from webhook_events where event_id = $1',
    [eventId],
  );
  return rows[0]?.attempts ?? 0;
}

describe('an effect slower than the job expiry', () => {
  it(`an email held past the ${EXPIRE_SECONDS} s expiry: later attempts wait, one email`, async () => {
    const event = checkout('slow', 0, 'cus_slow_mail', false);
    let release!: () => void;
    mailHold = new Promise<void>((resolve) => (release = resolve));
    const started = Date.now();
    expect(await producer.send(event.raw)).toBe('accepted');
    // The mail server acknowledges the message once the job has expired and a later attempt has started.
    await waitForOrExplain(
      async () => smtp.messages.length > 0 && (await attemptsOf(event.raw.eventId)) >= 2,
      { timeout: 60_000, interval: 100, message: 'a later attempt while the email is being sent' },
      () => snapshot(pool),
      scenario.processes,
    );
    const heldMs = Date.now() - started;
    release();
    await waitForOrExplain(
      async () => (await eventStatus(pool, event.raw.eventId)) === 'processed' && queueDrained(pool),
      { timeout: 60_000, interval: 100, message: 'the slow event processed' },
      () => snapshot(pool),
      scenario.processes,
    );
    const seconds = (Date.now() - started) / 1000;
    const attempts = await attemptsOf(event.raw.eventId);
    const { rows: keys } = await pool.query<{ attempts: number; status: string }>(
      `select attempts, status from idempotency_keys where effect = 'sendWelcomeEmail' and event_id = $1`,
      [event.raw.eventId],
    );
    const reran = scenario.processes.filter((w) => w.output().includes('never reported back')).length;
    report('slow-effect', {
      effect: 'sendWelcomeEmail (external)',
      heldMs,
      expireSeconds: EXPIRE_SECONDS,
      seconds: seconds.toFixed(1),
      eventAttempts: attempts,
      keyClaims: keys[0]?.attempts,
      emails: smtp.messages.length,
      duplicates: smtp.duplicates(),
    });
    // The job did expire and run again while the email was being sent...
    expect(attempts).toBeGreaterThanOrEqual(2);
    // ...and the later attempts neither sent it nor claimed it again.
    expect(smtp.messages).toHaveLength(1);
    expect(keys).toEqual([{ attempts: 1, status: 'completed' }]);
    expect(reran).toBe(0);
    expect((await snapshot(pool)).effects.accounts).toBe(1);
  });

  it(`a database effect held up past the ${EXPIRE_SECONDS} s expiry: later attempts wait, one write`, async () => {
    const event = order('slow', 1);
    const lock = await pool.connect();
    let released = false;
    try {
      // Holds back every INSERT into shopify_orders: the first attempt's effect blocks inside its transaction.
      await lock.query('begin');
      await lock.query('lock table shopify_orders in share mode');
      expect(await producer.send(event.raw)).toBe('accepted');
      // Release once a later attempt has started and is itself waiting: its fence (the attempt number it writes on
      // the event's row) waits behind the first attempt's share lock of that row, so the count of attempts moves
      // only once the first has committed.
      await waitForOrExplain(
        async () => {
          const { rows } = await pool.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
          );
          return rows[0]!.n >= 2;
        },
        { timeout: 30_000, interval: 50, message: 'a second attempt waiting behind the first' },
        () => snapshot(pool),
        scenario.processes,
      );
      await lock.query('commit');
      released = true;

      await waitFor(
        async () => (await eventStatus(pool, event.raw.eventId)) === 'processed' && queueDrained(pool),
        { timeout: 60_000, interval: 100, message: 'the held-up event processed' },
      );
      const after = await snapshot(pool);
      const { rows } = await pool.query<{ attempts: number; status: string }>(
        `select attempts, status from effect_runs where effect = 'saveOrder' and event_id = $1`,
        [event.raw.eventId],
      );
      report('slow-effect', {
        effect: 'saveOrder (database)',
        expireSeconds: EXPIRE_SECONDS,
        attempts: await attemptsOf(event.raw.eventId),
        orderInserts: after.effects.shopify_orders,
        ledger: rows[0],
        duplicates: (after.effects.shopify_orders ?? 0) - 1,
      });
      expect(await attemptsOf(event.raw.eventId)).toBeGreaterThanOrEqual(2);
      expect(after.effects.shopify_orders).toBe(1);
      expect(rows).toEqual([{ attempts: 1, status: 'completed' }]);
      expect(after.unfinishedEffects).toBe(0);
      expectNoCrashLines(scenario.processes);
    } finally {
      if (!released) await lock.query('rollback').catch(() => {});
      lock.release();
    }
  });
});
