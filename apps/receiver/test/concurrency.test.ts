import { useTestDatabase } from '@webhook-inbox/testing';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import {
  post,
  receiverEnv,
  recorded,
  shopifyDelivery,
  spawnReceiver,
  standardDelivery,
  stripeDelivery,
  type Delivery,
  type SpawnedReceiver,
} from './helpers.ts';

// Redeliveries racing each other: each over its own TCP connection to a real server.

const db = useTestDatabase();
const running: Array<{ close(): Promise<unknown> }> = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
});

async function burst(urls: string[], delivery: Delivery, count: number) {
  const results = await Promise.all(
    Array.from({ length: count }, (_, i) => post(urls[i % urls.length]!, delivery)),
  );
  const outcomes = results.map((r) => {
    expect(r.status, r.body).toBe(200);
    const body = JSON.parse(r.body) as { status: string; id: string };
    expect(body.id).toBe(delivery.key);
    return body.status;
  });
  return {
    accepted: outcomes.filter((o) => o === 'accepted').length,
    duplicate: outcomes.filter((o) => o === 'duplicate').length,
  };
}

describe('100 concurrent deliveries of one event', () => {
  it('one receiver: exactly one accepted, 99 duplicates, one row, one job (each provider)', async () => {
    const receiver: Receiver = await startReceiver(parseConfig({ ...receiverEnv(db.url), PORT: '0' }), {
      logger: pino({ level: 'silent' }),
    });
    running.push(receiver);
    for (const delivery of [stripeDelivery(), shopifyDelivery(), standardDelivery()]) {
      expect(await burst([receiver.url], delivery, 100)).toEqual({ accepted: 1, duplicate: 99 });
      expect(await recorded(db.url, { provider: delivery.provider, eventId: delivery.key })).toEqual({
        events: 1,
        jobs: 1,
      });
    }
  });

  it('two receiver processes sharing the database: still exactly one accepted, one row, one job', async () => {
    const env = receiverEnv(db.url, { LOG_LEVEL: 'warn', DATABASE_POOL_SIZE: '8' });
    const receivers: SpawnedReceiver[] = await Promise.all([spawnReceiver(env), spawnReceiver(env)]);
    running.push(...receivers.map((r) => ({ close: () => r.stop() })));
    const urls = receivers.map((r) => r.url);
    for (const delivery of [stripeDelivery(), shopifyDelivery()]) {
      expect(await burst(urls, delivery, 100)).toEqual({ accepted: 1, duplicate: 99 });
      expect(await recorded(db.url, { provider: delivery.provider, eventId: delivery.key })).toEqual({
        events: 1,
        jobs: 1,
      });
    }
    // Many different events at once across both: every one recorded once with one job.
    const deliveries = Array.from({ length: 50 }, () => stripeDelivery());
    const before = await recorded(db.url);
    const results = await Promise.all(deliveries.flatMap((d) => urls.map((url) => post(url, d))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const accepted = results.filter((r) => (JSON.parse(r.body) as { status: string }).status === 'accepted');
    expect(accepted).toHaveLength(50);
    expect(await recorded(db.url)).toEqual({ events: before.events + 50, jobs: before.jobs + 50 });
    for (const receiver of receivers) expect((await receiver.stop()).code).toBe(0);
  });
});
