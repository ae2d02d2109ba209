import os from 'node:os';
import { createSenderBoss } from '@webhook-inbox/inbox';
import { PURGE_QUEUE } from '@webhook-inbox/operator';
import { metricValue, useTestDatabase, waitFor, startAlertSink } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/env.ts';
import { startWorker, type Worker } from '../src/worker.ts';
import { checkoutEvent, queueEnv, startProducer } from '@webhook-inbox/scenarios/worker';

// The worker's operations: the retention purge and (with STRIPE_API_KEY) the reconciliation run on pg-boss
// schedules; RETENTION_KEY_DAYS below 7 and RETENTION_PAYLOAD_DAYS below 3 are refused at start-up. A dead
// event is alerted with its failed effects and payload, read from the event log.

const db = useTestDatabase();
let worker: Worker | undefined;
afterAll(async () => {
  await worker?.close();
});

describe('scheduled operations', () => {
  // The workers below connect as the application's role, which owns nothing (test/roles.test.ts): the scheduled
  // purge and reconciliation, their queues and schedules, with its grants alone.
  it('schedules the retention purge and the Stripe reconciliation', async () => {
    worker = await startWorker(
      parseConfig({
        DATABASE_URL: db.appUrl,
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
        {
          name: 'webhook-inbox-purge',
          cron: '5 4 * * *',
          data: { payloadDays: 30, keyDays: 90, historyDays: 30, auditDays: 365 },
        },
        { name: 'webhook-inbox-reconcile-stripe', cron: '*/15 * * * *', data: {} },
      ]);
    } finally {
      await client.end();
    }
  });

  it('refuses a key retention under 7 days and a payload retention under 3', () => {
    expect(() => parseConfig({ DATABASE_URL: db.url, RETENTION_KEY_DAYS: '3' })).toThrow(
      /RETENTION_KEY_DAYS/,
    );
    expect(() => parseConfig({ DATABASE_URL: db.url, RETENTION_PAYLOAD_DAYS: '2' })).toThrow(
      /RETENTION_PAYLOAD_DAYS/,
    );
  });
});

describe('dead-event alerts', () => {
  it('names the failed effect, its error and the payload, read from the event log', async () => {
    // The scheduling test's worker would take the event too, and it has no alert URL.
    await worker?.close();
    worker = undefined;
    const sink = await startAlertSink();
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const producer = await startProducer(pool, db.url);
    const alerted = await startWorker(
      parseConfig({
        DATABASE_URL: db.appUrl,
        WORKER_PORT: '0',
        MAIL_DIR: os.tmpdir(),
        LOG_LEVEL: 'silent',
        ALERT_WEBHOOK_URL: sink.url,
        ...queueEnv(),
      }),
    );
    try {
      // A checkout without an email: provisioning the account fails permanently, so the event is dead at once.
      const event = checkoutEvent({ email: '' });
      const sessionId = (JSON.parse(event.payloadText) as { data: { object: { id: string } } }).data.object
        .id;
      await producer.send(event);
      const alert = await waitFor(() => sink.bodies.find((body) => body.includes(event.eventId)), {
        timeout: 30_000,
        message: 'the dead event alerted',
      });
      // The effect and its error come from effect_runs: an alert without them names the event only.
      expect(alert).toContain('effect: provisionAccount');
      expect(alert).toContain('error: the checkout session has no customer email');
      expect(alert).toContain(sessionId);
      // And recorded, for the console's alerts page, once delivered.
      const recorded = await waitFor(
        async () =>
          (
            await pool.query<{ kind: string; effect: string; outcome: string; service: string }>(
              'select kind, effect, outcome, service from alerts_sent where event_id = $1',
              [event.eventId],
            )
          ).rows[0],
        { message: 'the alert recorded in alerts_sent' },
      );
      expect(recorded).toEqual({
        kind: 'effect_failed',
        effect: 'provisionAccount',
        outcome: 'sent',
        service: 'webhook-inbox worker',
      });
      // Delivered, and counted on /metrics (the alerter's totals, read at scrape time).
      const sent = await waitFor(
        async () => {
          const value = metricValue(await scrape(alerted.url), 'webhook_alerts_total', { outcome: 'sent' });
          return value !== undefined && value >= 1 ? value : undefined;
        },
        { timeout: 10_000, message: 'the sent alert counted' },
      );
      expect(sent).toBeGreaterThanOrEqual(1);
    } finally {
      await alerted.close();
      await producer.stop();
      await pool.end();
      await sink.close();
    }
  });
});

describe('retention metrics', () => {
  it('counts a purge run and the rows it changed', async () => {
    const worker = await startWorker(
      parseConfig({ DATABASE_URL: db.appUrl, WORKER_PORT: '0', MAIL_DIR: os.tmpdir(), LOG_LEVEL: 'silent' }),
    );
    const boss = createSenderBoss(db.url, { applicationName: 'retention-metrics-test' });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // A processed event past the key retention (90 days by default): the purge deletes it.
      await client.query(
        `insert into webhook_events (provider, event_id, type, status, received_at)
         values ('stripe', 'evt_retention_metrics', 'checkout.session.completed', 'processed',
                 now() - interval '120 days')`,
      );
      expect(
        metricValue(await scrape(worker.url), 'webhook_retention_runs_total', { outcome: 'complete' }),
      ).toBe(undefined);
      await boss.start();
      await boss.send(PURGE_QUEUE, {});
      await waitFor(
        async () =>
          metricValue(await scrape(worker.url), 'webhook_retention_runs_total', { outcome: 'complete' }) ===
            1 || undefined,
        { timeout: 30_000, message: 'the purge run counted' },
      );
      const text = await scrape(worker.url);
      expect(metricValue(text, 'webhook_retention_rows_total', { kind: 'keys' })).toBe(1);
      expect(metricValue(text, 'webhook_retention_last_success_timestamp_seconds')).toBeGreaterThan(0);
    } finally {
      await boss.stop({ graceful: false, close: true });
      await client.end();
      await worker.close();
    }
  });
});

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  return response.text();
}
