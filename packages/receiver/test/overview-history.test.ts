import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, login } from '../../console/test/support.ts';
import { createDeliveryCounter } from '../src/ingress/delivery-counts.ts';
import { parseConfig } from '../src/config/env.ts';
import { startInboxSampler } from '../src/management/inbox-sampler.ts';
import { startReceiver, type Receiver } from '../src/receiver.ts';
import { memoryLogger, sql } from './helpers.ts';
import { receiverEnv, stripeDelivery, type Delivery } from '@webhook-inbox/scenarios/receiver';

// The console overview's history: a real receiver counts its answers per minute into webhook_delivery_counts and
// samples the inbox into inbox_samples, and its console (on the management listener) charts both.

const db = useTestDatabase();
const memory = memoryLogger();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(parseConfig(receiverEnv(db.url, { PORT: '0', ADMIN_TOKEN })), {
    logger: memory.logger,
  });
});
afterAll(async () => {
  await receiver?.close();
});

/** Sends one delivery: the HTTP status and the outcome the receiver answered (`status`, or the error code). */
async function deliver(
  delivery: Delivery,
  path = delivery.path,
): Promise<{ status: number; outcome: string }> {
  const response = await fetch(`${receiver.url}${path}`, {
    method: 'POST',
    body: delivery.body,
    headers: delivery.headers,
  });
  const body = (await response.json()) as { status?: string; error?: { code: string } };
  return { status: response.status, outcome: body.status ?? body.error?.code ?? '' };
}

/** The table's counts summed over its minutes: `provider outcome status` → requests. */
async function counted(): Promise<Record<string, number>> {
  const { rows } = await sql(
    db.url,
    `select provider || ' ' || outcome || ' ' || http_status as key, sum(count)::int as n
       from webhook_delivery_counts group by 1 order by 1`,
  );
  return Object.fromEntries((rows as { key: string; n: number }[]).map((r) => [r.key, r.n]));
}

const unescape = (text: string) => text.replaceAll('&quot;', '"').replaceAll('&amp;', '&');

/** Each chart's series on the overview (`data-chart` → name → values), as the browser gets them. */
function charts(page: string): Record<string, Record<string, (number | null)[]>> {
  const found: Record<string, Record<string, (number | null)[]>> = {};
  for (const [, id, json] of page.matchAll(/data-chart="([^"]+)"[^>]*data-series="([^"]+)"/g)) {
    const series = JSON.parse(unescape(json ?? '')) as { names: string[]; values: (number | null)[][] };
    found[id ?? ''] = Object.fromEntries(series.names.map((name, i) => [name, series.values[i] ?? []]));
  }
  return found;
}
const sum = (values: (number | null)[] = []) => values.reduce<number>((total, v) => total + (v ?? 0), 0);

describe('the overview history, from a real receiver', () => {
  it('counts accepted, duplicate and refused deliveries per minute, and the overview charts them', async () => {
    const first = stripeDelivery();
    for (const delivery of [first, stripeDelivery(), stripeDelivery()]) {
      expect(await deliver(delivery)).toEqual({ status: 200, outcome: 'accepted' });
    }
    for (let i = 0; i < 2; i++) {
      expect(await deliver(first)).toEqual({ status: 200, outcome: 'duplicate' });
    }
    expect(await deliver(stripeDelivery({ secret: 'whsec_not_ours' }))).toEqual({
      status: 400,
      outcome: 'invalid_signature',
    });
    expect(await deliver(first, '/webhooks/nobody')).toEqual({ status: 404, outcome: 'unknown_provider' });

    const expected = {
      'stripe accepted 200': 3,
      'stripe duplicate 200': 2,
      'stripe invalid_signature 400': 1,
      'unknown unknown_provider 404': 1,
    };
    // Written by the receiver's flush, every few seconds.
    await waitFor(async () => JSON.stringify(await counted()) === JSON.stringify(expected), {
      timeout: 30_000,
      message: 'the counts in webhook_delivery_counts',
    });
    expect(await counted()).toEqual(expected);

    const client = await login(`${receiver.managementUrl}/console`);
    for (const window of ['1h', '24h']) {
      const page = await (await client.get(`/overview/figures?window=${window}`)).text();
      const requests = charts(page).requests;
      expect(Object.keys(requests ?? {})).toEqual(['accepted', 'duplicate', 'refused', 'not recorded']);
      expect({
        accepted: sum(requests?.accepted),
        duplicate: sum(requests?.duplicate),
        refused: sum(requests?.refused),
        notRecorded: sum(requests?.['not recorded']),
      }).toEqual({ accepted: 3, duplicate: 2, refused: 2, notRecorded: 0 });
    }
  });

  it('samples the backlog, failed and dead events and failing effects once a minute, and the overview charts them', async () => {
    await sql(
      db.url,
      `insert into webhook_events (provider, event_id, type, status)
       values ('stripe', 'evt_sample_failed', 't', 'failed'), ('stripe', 'evt_sample_dead', 't', 'dead')`,
    );
    await sql(
      db.url,
      `insert into effect_runs (provider, event_id, effect, status, idempotency_key)
       values ('stripe', 'evt_sample_failed', 'notifyCrm', 'failed', 'k1'),
              ('stripe', 'evt_sample_dead', 'notifyCrm', 'failed', 'k2'),
              ('stripe', 'evt_sample_dead', 'sendReceipt', 'failed', 'k3')`,
    );
    // The receiver sampled this minute at its start; a sampler that finds the minute's row reads nothing more.
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const sampler = startInboxSampler({ pool, logger: memory.logger });
      await sampler.stop();
      await sql(db.url, 'delete from inbox_samples');
      await sampler.sample();
      const { rows } = await sql(
        db.url,
        `select events_failed as failed, events_dead as dead, failing_effects as effects,
                jobs_created + jobs_retry as waiting
           from inbox_samples`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ failed: 1, dead: 1, effects: { notifyCrm: 2, sendReceipt: 1 } });
      expect((rows[0] as { waiting: number }).waiting).toBeGreaterThanOrEqual(3); // the jobs of the accepted events

      // A second sample in the same minute keeps the first one.
      await sql(db.url, `update webhook_events set status = 'dead' where event_id = 'evt_sample_failed'`);
      await sampler.sample();
      const again = await sql(
        db.url,
        `select minute, events_dead as dead from inbox_samples order by minute`,
      );
      expect((again.rows[0] as { dead: number }).dead).toBe(1);
    } finally {
      await pool.end();
    }

    const client = await login(`${receiver.managementUrl}/console`);
    const page = charts(await (await client.get('/overview/figures?window=1h')).text());
    expect(Math.max(...(page.open?.dead ?? []).map((v) => v ?? 0))).toBeGreaterThanOrEqual(1);
    expect(Object.keys(page.effects ?? {})).toEqual(['notifyCrm', 'sendReceipt']);
    expect(Math.max(...(page.effects?.notifyCrm ?? []).map((v) => v ?? 0))).toBe(2);
    // A minute without a sample is a gap, not a zero.
    expect(page.backlog?.waiting?.[0]).toBeNull();
  });

  it('answers webhooks as usual while the counts cannot be written, and writes them once the table is back', async () => {
    await sql(db.url, 'truncate webhook_delivery_counts');
    await sql(db.url, 'alter table webhook_delivery_counts rename to webhook_delivery_counts_away');
    let sent = 0;
    try {
      // Deliveries until a flush has failed (the receiver flushes every few seconds), then a few more.
      const failed = () =>
        memory.lines().some((line) => line.includes('could not write the delivery counts'));
      await waitFor(
        async () => {
          const answer = await deliver(stripeDelivery());
          expect(answer).toEqual({ status: 200, outcome: 'accepted' });
          sent++;
          return failed();
        },
        { timeout: 30_000, interval: 100, message: 'a failed flush' },
      );
      for (let i = 0; i < 5; i++) {
        expect(await deliver(stripeDelivery())).toEqual({ status: 200, outcome: 'accepted' });
        sent++;
      }
    } finally {
      await sql(db.url, 'alter table webhook_delivery_counts_away rename to webhook_delivery_counts');
    }
    await waitFor(async () => (await counted())['stripe accepted 200'] === sent, {
      timeout: 30_000,
      message: `the ${sent} held counts written`,
    });
    expect(memory.lines().some((line) => line.includes('delivery counts written again'))).toBe(true);
  });
});

describe('createDeliveryCounter', () => {
  it('writes what it holds when stopped, and keeps the newest minutes within maxRows', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      await pool.query('truncate webhook_delivery_counts');
      let now = Date.parse('2026-01-01T10:00:30Z');
      const { logger, lines } = memoryLogger();
      // No timer flush within the test: only stop() writes.
      const counter = createDeliveryCounter({
        pool,
        logger,
        flushIntervalMs: 3_600_000,
        maxRows: 2,
        now: () => now,
      });
      counter.count('stripe', 'accepted', 200);
      counter.count('stripe', 'accepted', 200);
      now += 60_000;
      counter.count('stripe', 'duplicate', 200);
      now += 60_000;
      counter.count('stripe', 'accepted', 200);
      await counter.stop();
      const { rows } = await pool.query<{ minute: Date; outcome: string; count: number }>(
        'select minute, outcome, count::int as count from webhook_delivery_counts order by minute',
      );
      expect(rows).toEqual([
        { minute: new Date('2026-01-01T10:01:00Z'), outcome: 'duplicate', count: 1 },
        { minute: new Date('2026-01-01T10:02:00Z'), outcome: 'accepted', count: 1 },
      ]);
      expect(lines().some((line) => line.includes('"uncounted":2'))).toBe(true);
    } finally {
      await pool.end();
    }
  });
});
