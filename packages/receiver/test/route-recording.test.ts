import { createInbox, type InboxWorker } from '@webhook-inbox/inbox';
import { useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { memoryLogger } from './helpers.ts';
import { post, receiverEnv, stripeDelivery } from '@webhook-inbox/scenarios/receiver';

// A new consumer group's worker records its routes (effect_routes), which every receiver insert reads, while a
// pg_dump holds its ACCESS SHARE lock on the table: the recording must not queue the inserts behind it.

const db = useTestDatabase();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(parseConfig({ ...receiverEnv(db.url), PORT: '0' }), {
    logger: memoryLogger('warn').logger,
  });
});
afterAll(async () => {
  await receiver?.close();
});

/** The locks on effect_routes: who holds what, and who waits. */
async function routeLocks(client: pg.Client): Promise<{ pid: number; mode: string; granted: boolean }[]> {
  const { rows } = await client.query<{ pid: number; mode: string; granted: boolean }>(
    `select pid, mode, granted from pg_locks where relation = 'effect_routes'::regclass order by pid, mode`,
  );
  return rows;
}

async function groupsOf(client: pg.Client, eventId: string): Promise<string[]> {
  const { rows } = await client.query<{ consumer_group: string }>(
    'select consumer_group from webhook_event_groups where event_id = $1 order by 1',
    [eventId],
  );
  return rows.map((row) => row.consumer_group);
}

describe("a new group's routes while pg_dump holds effect_routes", () => {
  it('are recorded, and every webhook sent meanwhile is recorded, while the dump still holds its lock', async () => {
    const dump = new pg.Client({ connectionString: db.url, application_name: 'pg_dump' });
    const observer = new pg.Client({ connectionString: db.url });
    await dump.connect();
    await observer.connect();
    let worker: InboxWorker | undefined;
    try {
      // What pg_dump does: one repeatable-read transaction that locks every table it dumps in ACCESS SHARE mode.
      await dump.query('begin isolation level repeatable read read only');
      await dump.query('lock table effect_routes in access share mode');
      const dumpPid = (await dump.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;

      const starting = createInbox()
        .on('stripe', 'checkout.session.completed', { recordRevenue: () => {} })
        .start({ connectionString: db.url, group: 'billing', pollingIntervalSeconds: 0.5, poolSize: 2 });
      // Webhooks while the worker starts (before, during or after its routes: each is recorded).
      const during: string[] = [];
      for (let i = 0; i < 10; i++) {
        const delivery = stripeDelivery();
        const answer = await post(receiver.url, delivery);
        expect(answer.status, answer.body).toBe(200);
        during.push(delivery.key);
      }
      worker = await starting;

      // The routes are recorded and in effect: a webhook now is delivered to the new group.
      const after = stripeDelivery();
      const answer = await post(receiver.url, after);
      expect(answer.status, answer.body).toBe(200);
      expect(await groupsOf(observer, after.key)).toEqual(['billing']);

      // All of it happened while the dump held its lock, and nobody waits on the table.
      const locks = await routeLocks(observer);
      expect(locks).toContainEqual({ pid: dumpPid, mode: 'AccessShareLock', granted: true });
      expect(locks.filter((lock) => !lock.granted)).toEqual([]);
      const { rows } = await observer.query<{ n: number }>(
        'select count(*)::int as n from webhook_events where event_id = any($1)',
        [[...during, after.key]],
      );
      expect(rows[0]!.n).toBe(during.length + 1);
    } finally {
      await dump.query('rollback').catch(() => {});
      await dump.end();
      await observer.end();
      await worker?.stop({ timeoutMs: 5_000 });
    }
  });
});
