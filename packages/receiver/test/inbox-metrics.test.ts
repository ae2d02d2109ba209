import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { ensureQueues, EVENTS_QUEUE, ingest } from '@webhook-inbox/inbox';
import { signStripe, createProviders } from '@webhook-inbox/providers';
import { metricValue, useTestDatabase, fixtureText } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createManagementApp,
  createMetrics,
  createRequestPool,
  createSender,
  parseConfig,
} from '../src/index.ts';
import { memoryLogger } from './helpers.ts';
import { receiverEnv, STRIPE_SECRET } from '@webhook-inbox/scenarios/receiver';

// The inbox's gauges on the management listener's /metrics, read from a real database: they move with the
// events and jobs, and concurrent scrapes share one read.

const db = useTestDatabase();
const { logger } = memoryLogger();
const providers = createProviders({ stripeSecrets: [STRIPE_SECRET], toleranceSeconds: 300 });
let pool: pg.Pool;
let boss: PgBoss;

beforeAll(async () => {
  pool = createRequestPool(parseConfig(receiverEnv(db.url)), logger);
  boss = createSender(db.url, logger);
  await boss.start();
  await ensureQueues(boss);
});
afterAll(async () => {
  await boss.stop({ graceful: false, close: true });
  await pool.end();
});

function managementApp(statsMaxAgeMs: number): ReturnType<typeof createManagementApp> {
  return createManagementApp({
    pool,
    boss,
    logger,
    metrics: createMetrics(pool, { defaultMetrics: false }),
    statsMaxAgeMs,
  });
}

async function scrape(app: ReturnType<typeof createManagementApp>): Promise<string> {
  const response = await app.request('/metrics');
  expect(response.status).toBe(200);
  return response.text();
}

async function ingestStripe(id: string): Promise<void> {
  const body = JSON.stringify({
    ...(JSON.parse(fixtureText('stripe/checkout.session.completed.json')) as object),
    id,
  });
  const signature = signStripe({ payload: body, secret: STRIPE_SECRET });
  const event = providers.get('stripe')!.verify(
    {
      rawBody: Buffer.from(body),
      header: (name) => (name.toLowerCase() === 'stripe-signature' ? signature : null),
    },
    new Date(),
  );
  expect(await ingest({ pool, boss }, event)).toBe('accepted');
}

describe('the inbox gauges', () => {
  it('follow the events and jobs in the database', async () => {
    const app = managementApp(0);
    const before = await scrape(app);
    expect(metricValue(before, 'webhook_inbox_stats_up')).toBe(1);
    expect(metricValue(before, 'webhook_events', { status: 'received' })).toBe(0);
    expect(metricValue(before, 'webhook_oldest_unprocessed_event_age_seconds')).toBe(0);
    expect(metricValue(before, 'webhook_queue_jobs', { queue: EVENTS_QUEUE, state: 'created' })).toBe(0);

    await ingestStripe('evt_metrics_one');
    await ingestStripe('evt_metrics_two');
    // One of them has waited ten minutes.
    await pool.query(
      `update webhook_events set received_at = now() - interval '10 minutes' where event_id = 'evt_metrics_one'`,
    );
    const backlog = await scrape(app);
    expect(metricValue(backlog, 'webhook_events', { status: 'received' })).toBe(2);
    expect(metricValue(backlog, 'webhook_queue_jobs', { queue: EVENTS_QUEUE, state: 'created' })).toBe(2);
    expect(metricValue(backlog, 'webhook_oldest_unprocessed_event_age_seconds')).toBeGreaterThanOrEqual(600);

    // The old one dies (dead events wait for an operator: they no longer count as the backlog's age).
    await pool.query(`update webhook_events set status = 'dead' where event_id = 'evt_metrics_one'`);
    await pool.query(`update pgboss.job set state = 'active' where name = $1`, [EVENTS_QUEUE]);
    const after = await scrape(app);
    expect(metricValue(after, 'webhook_events', { status: 'dead' })).toBe(1);
    expect(metricValue(after, 'webhook_events', { status: 'received' })).toBe(1);
    expect(metricValue(after, 'webhook_oldest_unprocessed_event_age_seconds')).toBeLessThan(600);
    expect(metricValue(after, 'webhook_queue_jobs', { queue: EVENTS_QUEUE, state: 'created' })).toBe(0);
    expect(metricValue(after, 'webhook_queue_jobs', { queue: EVENTS_QUEUE, state: 'active' })).toBe(2);

    // Another consumer group's rows are counted by group and status, processed ones left out.
    await pool.query(`
      insert into webhook_event_groups (provider, event_id, consumer_group, status)
      values ('stripe', 'evt_metrics_one', 'billing', 'failed'), ('stripe', 'evt_metrics_two', 'billing', 'processed')`);
    const groups = await scrape(managementApp(0));
    expect(metricValue(groups, 'webhook_event_groups', { group: 'billing', status: 'failed' })).toBe(1);
    expect(metricValue(groups, 'webhook_event_groups', { group: 'billing', status: 'processed' })).toBe(
      undefined,
    );
  });

  it('are read once for any number of concurrent scrapes within their max age', async () => {
    const app = managementApp(60_000);
    const query = vi.spyOn(pool, 'query');
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => scrape(app)));
      for (const text of answers) expect(metricValue(text, 'webhook_inbox_stats_up')).toBe(1);
      await scrape(app);
      const names = query.mock.calls.map(([statement]) => (statement as { name?: string }).name);
      expect(names.filter((name) => name === 'webhook_inbox_count_unfinished')).toHaveLength(1);
      expect(names.filter((name) => name === 'webhook_inbox_count_live_jobs')).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
  });

  it('say so when the database cannot be read, and the rest of /metrics still answers', async () => {
    // Nothing listens on port 1: every read is refused.
    const unreachable = createRequestPool(
      parseConfig(receiverEnv('postgres://inbox@127.0.0.1:1/inbox')),
      logger,
    );
    const app = createManagementApp({
      pool: unreachable,
      boss,
      logger,
      metrics: createMetrics(unreachable, { defaultMetrics: false }),
      statsMaxAgeMs: 0,
    });
    try {
      const text = await scrape(app);
      expect(metricValue(text, 'webhook_inbox_stats_up')).toBe(0);
      expect(metricValue(text, 'webhook_events', { status: 'received' })).toBeUndefined();
      expect(metricValue(text, 'db_pool_connections', { state: 'total' })).toBe(0);
    } finally {
      await unreachable.end();
    }
  });
});
