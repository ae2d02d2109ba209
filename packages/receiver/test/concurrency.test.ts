import { useTestDatabase } from '@webhook-inbox/testing';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { batchCounts, recorded, standardDelivery } from './helpers.ts';
import {
  post,
  receiverEnv,
  shopifyDelivery,
  spawnReceiver,
  stripeDelivery,
  type Delivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

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

const ROUNDS = 30;

/** One transaction at a time: requests that arrive meanwhile queue up behind it and go together. */
async function startBatching(): Promise<Receiver> {
  const receiver = await startReceiver(
    parseConfig({ ...receiverEnv(db.url), PORT: '0', GROUP_COMMIT_TRANSACTIONS: '1' }),
    { logger: pino({ level: 'silent' }) },
  );
  running.push(receiver);
  return receiver;
}

/** Concurrent deliveries (own TCP connection each), spread over `urls`: status and body of each. */
async function answers(urls: string[], deliveries: Delivery[]) {
  const results = await Promise.all(deliveries.map((d, i) => post(urls[i % urls.length]!, d)));
  return results.map((r) => ({
    status: r.status,
    body: JSON.parse(r.body) as { status?: string; error?: { code: string } },
  }));
}

// Group commit: concurrent requests share transactions. Each test keeps sending until the receiver's own metrics
// show the case it is about happened (several requests in one transaction, one key across transactions, a split
// batch), then checks what was answered against what the database holds.
describe('group commit over HTTP', () => {
  it('one key sent 40 times at once, across several transactions: one accepted, one row, one job', async () => {
    const receiver = await startBatching();
    for (let round = 1; ; round++) {
      const before = await batchCounts(receiver.managementUrl);
      const delivery = stripeDelivery();
      const results = await answers(
        [receiver.url],
        Array.from({ length: 40 }, () => delivery),
      );
      expect(results.filter((r) => r.status !== 200)).toEqual([]);
      expect(results.filter((r) => r.body.status === 'accepted')).toHaveLength(1);
      expect(results.filter((r) => r.body.status === 'duplicate')).toHaveLength(39);
      expect(await recorded(db.url, { provider: 'stripe', eventId: delivery.key })).toEqual({
        events: 1,
        jobs: 1,
      });
      const after = await batchCounts(receiver.managementUrl);
      // Only this burst ran: the key went through more than one transaction, and one held several requests.
      const batches = after.committed.batches - before.committed.batches;
      const multi = after.committed.multi - before.committed.multi;
      if (batches >= 2 && multi >= 1) break;
      if (round === ROUNDS) throw new Error(`no burst spread over several transactions in ${ROUNDS} rounds`);
    }
  });

  it('two receiver processes, each batching the same keys: one accepted, one row, one job per key', async () => {
    const env = receiverEnv(db.url, { LOG_LEVEL: 'warn', GROUP_COMMIT_TRANSACTIONS: '1' });
    const receivers: SpawnedReceiver[] = await Promise.all([spawnReceiver(env), spawnReceiver(env)]);
    running.push(...receivers.map((r) => ({ close: () => r.stop() })));
    const urls = receivers.map((r) => r.url);
    for (let round = 1; ; round++) {
      const before = await Promise.all(receivers.map((r) => batchCounts(r.managementUrl)));
      // Five keys, each sent eight times, alternating between the two processes.
      const keys = Array.from({ length: 5 }, () => stripeDelivery());
      const deliveries = keys.flatMap((d) => Array.from({ length: 8 }, () => d));
      const results = await answers(urls, deliveries);
      expect(results.filter((r) => r.status !== 200)).toEqual([]);
      for (const key of keys) {
        const answers = results.filter((_, i) => deliveries[i] === key).map((r) => r.body.status);
        expect(answers.filter((a) => a === 'accepted')).toHaveLength(1);
        expect(await recorded(db.url, { provider: 'stripe', eventId: key.key })).toEqual({
          events: 1,
          jobs: 1,
        });
      }
      const after = await Promise.all(receivers.map((r) => batchCounts(r.managementUrl)));
      // Both processes recorded several requests in one transaction during this round.
      if (after.every((a, i) => a.committed.multi > before[i]!.committed.multi)) break;
      if (round === ROUNDS)
        throw new Error(`both processes never batched in the same round (${ROUNDS} rounds)`);
    }
    for (const receiver of receivers) expect((await receiver.stop()).code).toBe(0);
  });

  it('a payload PostgreSQL refuses inside a batch: 400 for it, 200 and recorded for its neighbours', async () => {
    const receiver = await startBatching();
    for (let round = 1; ; round++) {
      const before = await batchCounts(receiver.managementUrl);
      const poisonId = `evt_poison_${round}_${Date.now()}`;
      const poison = stripeDelivery({
        id: poisonId,
        body: JSON.stringify({
          id: poisonId,
          object: 'event',
          type: 'invoice.paid',
          data: { note: 'a\u0000b' },
        }),
      });
      const neighbours = Array.from({ length: 12 }, () => stripeDelivery());
      const deliveries = [...neighbours.slice(0, 6), poison, ...neighbours.slice(6)];
      const results = await answers([receiver.url], deliveries);
      expect(results[6]).toEqual({
        status: 400,
        body: { error: { code: 'invalid_payload', message: expect.stringContaining('22P05') as string } },
      });
      expect(results.filter((_, i) => i !== 6)).toEqual(
        neighbours.map((d) => ({ status: 200, body: { status: 'accepted', id: d.key } })),
      );
      for (const d of neighbours) {
        expect(await recorded(db.url, { provider: 'stripe', eventId: d.key })).toEqual({
          events: 1,
          jobs: 1,
        });
      }
      expect(await recorded(db.url, { provider: 'stripe', eventId: poisonId })).toEqual({
        events: 0,
        jobs: 0,
      });
      // The poison shared a transaction with neighbours (which was split to isolate it).
      const after = await batchCounts(receiver.managementUrl);
      if (after.split.batches > before.split.batches) break;
      if (round === ROUNDS) throw new Error(`the poison never shared a transaction in ${ROUNDS} rounds`);
    }
  });
});
