import { useTestDatabase } from '@webhook-inbox/testing';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import {
  batchCounts,
  post,
  receiverEnv,
  recorded,
  spawnReceiver,
  stripeDelivery,
  type Delivery,
  type SpawnedReceiver,
} from './helpers.ts';

// Group commit over real HTTP: concurrent requests share transactions. Each test keeps sending until the
// receiver's own metrics show the case it is about happened (several requests in one transaction, one key across
// transactions, a split batch), then checks what was answered against what the database holds.

const db = useTestDatabase();
const running: Array<{ close(): Promise<unknown> }> = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
});

const ROUNDS = 30;

async function start(extra: Record<string, string> = {}): Promise<Receiver> {
  const receiver = await startReceiver(
    parseConfig({ ...receiverEnv(db.url), PORT: '0', GROUP_COMMIT_TRANSACTIONS: '1', ...extra }),
    { logger: pino({ level: 'silent' }) },
  );
  running.push(receiver);
  return receiver;
}

/** `count` concurrent deliveries (own TCP connection each), spread over `urls`: status and outcome of each. */
async function burst(urls: string[], deliveries: Delivery[]) {
  const results = await Promise.all(deliveries.map((d, i) => post(urls[i % urls.length]!, d)));
  return results.map((r) => ({
    status: r.status,
    body: JSON.parse(r.body) as { status?: string; error?: { code: string } },
  }));
}

describe('group commit over HTTP', () => {
  it('one key sent 40 times at once, across several transactions: one accepted, one row, one job', async () => {
    const receiver = await start();
    for (let round = 1; ; round++) {
      const before = await batchCounts(receiver.managementUrl);
      const delivery = stripeDelivery();
      const results = await burst([receiver.url], Array.from({ length: 40 }, () => delivery));
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
      const results = await burst(urls, deliveries);
      expect(results.filter((r) => r.status !== 200)).toEqual([]);
      for (const key of keys) {
        const answers = results.filter((_, i) => deliveries[i] === key).map((r) => r.body.status);
        expect(answers.filter((a) => a === 'accepted')).toHaveLength(1);
        expect(await recorded(db.url, { provider: 'stripe', eventId: key.key })).toEqual({ events: 1, jobs: 1 });
      }
      const after = await Promise.all(receivers.map((r) => batchCounts(r.managementUrl)));
      // Both processes recorded several requests in one transaction during this round.
      if (after.every((a, i) => a.committed.multi > before[i]!.committed.multi)) break;
      if (round === ROUNDS) throw new Error(`both processes never batched in the same round (${ROUNDS} rounds)`);
    }
    for (const receiver of receivers) expect((await receiver.stop()).code).toBe(0);
  });

  it('a payload PostgreSQL refuses inside a batch: 400 for it, 200 and recorded for its neighbours', async () => {
    const receiver = await start();
    for (let round = 1; ; round++) {
      const before = await batchCounts(receiver.managementUrl);
      const poisonId = `evt_poison_${round}_${Date.now()}`;
      const poison = stripeDelivery({
        id: poisonId,
        body: JSON.stringify({ id: poisonId, object: 'event', type: 'invoice.paid', data: { note: 'a\u0000b' } }),
      });
      const neighbours = Array.from({ length: 12 }, () => stripeDelivery());
      const deliveries = [...neighbours.slice(0, 6), poison, ...neighbours.slice(6)];
      const results = await burst([receiver.url], deliveries);
      expect(results[6]).toEqual({
        status: 400,
        body: { error: { code: 'invalid_payload', message: expect.stringContaining('22P05') as string } },
      });
      expect(results.filter((_, i) => i !== 6)).toEqual(
        neighbours.map((d) => ({ status: 200, body: { status: 'accepted', id: d.key } })),
      );
      for (const d of neighbours) {
        expect(await recorded(db.url, { provider: 'stripe', eventId: d.key })).toEqual({ events: 1, jobs: 1 });
      }
      expect(await recorded(db.url, { provider: 'stripe', eventId: poisonId })).toEqual({ events: 0, jobs: 0 });
      // The poison shared a transaction with neighbours (which was split to isolate it).
      const after = await batchCounts(receiver.managementUrl);
      if (after.split.batches > before.split.batches) break;
      if (round === ROUNDS) throw new Error(`the poison never shared a transaction in ${ROUNDS} rounds`);
    }
  });
});
