/**
 * 500 events while the worker process is SIGKILLed at random moments and restarted each time. Every event must end
 * processed, every database effect must have run exactly once (a statement trigger counts the INSERTs that
 * committed), every account gets its welcome email; duplicate emails (a kill between "accepted by SMTP" and
 * "marked sent") are counted and printed.
 */
import { randomInt } from 'node:crypto';
import { createPool } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { auditCounts, count, installEffectAudit, queueDrained } from './support/database.ts';
import {
  checkoutEvent,
  queueEnv,
  startProducer,
  subscriptionEvent,
  type RawEvent,
} from './support/events.ts';
import { spawnWorker, type WorkerProcess } from './support/process.ts';
import { startSmtpSink } from '@webhook-inbox/testing/smtp';

const db = useTestDatabase();

const CUSTOMERS = 300;
const KILLS = 12;

it('500 events, random SIGKILLs: every event processed, no duplicate database effect, duplicate emails counted', async () => {
  const pool = createPool({ connectionString: db.url, max: 4 });
  // A slightly slow mail server, so that kills land in the middle of sends too.
  const smtp = await startSmtpSink({ delayMs: () => randomInt(5, 25) });
  const producer = await startProducer(pool, db.url);
  const workers: WorkerProcess[] = [];
  try {
    await installEffectAudit(pool);
    const T = 1_700_000_000;
    const events: RawEvent[] = [];
    const subscriptions: string[] = [];
    // 400 checkouts: every customer once, the first 100 twice (one welcome email each all the same); every other
    // checkout creates a subscription.
    for (let i = 0; i < 400; i++) {
      const customer = `cus_chaos_${i % CUSTOMERS}`;
      const subscription = i % 2 === 0 ? `sub_chaos_${i}` : null;
      if (subscription) subscriptions.push(subscription);
      events.push(
        checkoutEvent({ customer, email: `c${i % CUSTOMERS}@example.test`, subscription, created: T + i }),
      );
    }
    // 100 subscription updates of those subscriptions.
    for (let i = 0; i < 100; i++) {
      const subscription = subscriptions[i] ?? '';
      events.push(
        subscriptionEvent('customer.subscription.updated', {
          subscription,
          customer: `cus_chaos_${(i * 2) % CUSTOMERS}`,
          created: T + 10_000 + i,
          status: 'active',
        }),
      );
    }
    expect(events).toHaveLength(500);
    for (let i = 0; i < events.length; i += 50) {
      await Promise.all(events.slice(i, i + 50).map((event) => producer.send(event)));
    }

    const env = {
      DATABASE_URL: db.url,
      SMTP_URL: smtp.url,
      LOG_LEVEL: 'warn',
      WORKER_POLL_SECONDS: '0.5',
      WORKER_SUPERVISE_SECONDS: '1',
      WORKER_BATCH_SIZE: '10',
      WORKER_CONCURRENCY: '2',
      ...queueEnv(),
    };
    const processed = () =>
      count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`);

    const started = Date.now();
    let kills = 0;
    while (kills < KILLS && (await processed()) < events.length) {
      const worker = spawnWorker({ ...env, LOG_LEVEL: 'info' });
      workers.push(worker);
      // Kill it while it works: once it has processed a random number (1-24) of events more, or all are done.
      await waitFor(() => worker.output().includes('"worker started"'), { timeout: 60_000 });
      const target = Math.min((await processed()) + randomInt(1, 25), events.length);
      await waitFor(async () => (await processed()) >= target, {
        timeout: 30_000,
        message: `${target} events processed before kill ${kills + 1}`,
      });
      worker.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      kills++;
    }
    const finisher = spawnWorker({ ...env, LOG_LEVEL: 'info' });
    workers.push(finisher);
    await waitFor(() => finisher.output().includes('"worker started"'), { timeout: 60_000 });
    await waitFor(async () => (await processed()) === events.length && queueDrained(pool), {
      timeout: 120_000,
      interval: 200,
      message: 'all 500 events processed after the kills',
    });
    finisher.kill('SIGTERM');
    expect(await finisher.exited, finisher.output()).toBe(0);
    const seconds = (Date.now() - started) / 1000;

    // Database effects: exactly once each (400 account upserts, 200 checkout + 100 event subscription writes).
    expect(await auditCounts(pool)).toEqual({ accounts: 400, subscriptions: 300 });
    expect(await count(pool, 'select count(*)::int as n from accounts')).toBe(CUSTOMERS);
    expect(await count(pool, `select count(*)::int as n from effect_runs where status <> 'completed'`)).toBe(
      0,
    );
    expect(
      await count(pool, `select count(*)::int as n from idempotency_keys where status <> 'completed'`),
    ).toBe(0);
    // Emails: one per account at least, never for anyone else; duplicates only as the same Message-ID.
    const counts = smtp.counts();
    expect(counts.size).toBe(CUSTOMERS);
    const duplicates = smtp.duplicates();
    console.log(
      `chaos: ${events.length} events, ${kills} SIGKILLs, ${seconds.toFixed(1)} s; ` +
        `${smtp.messages.length} emails for ${counts.size} accounts: ${duplicates} duplicate(s)`,
    );
    // A duplicate needs a kill inside the SMTP-accepted-but-not-marked window: at most one per kill and batch slot.
    expect(duplicates).toBeLessThanOrEqual(kills * 20);
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
    await producer.stop();
    await smtp.close();
    await pool.end();
  }
}, 300_000);
