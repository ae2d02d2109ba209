/**
 * An external effect whose key another worker holds is waited for (polling), holding no connection and no key.
 * Meanwhile the round it came in must finish its own effects: a worker waiting for one of them may be the holder
 * of the key this round waits for, and two rounds each keeping a key the other wants would both wait until
 * `claimWaitMs` gave out.
 */
import { createDb, createPool } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectRuns, job, startProducer, type Producer } from '../support/harness.ts';
import { scopedIdempotencyKey } from '../../src/effects/keys.ts';
import { EffectRegistry } from '../../src/effects/registry.ts';
import { EffectRunner } from '../../src/effects/runner.ts';
import { external } from '../../src/effects/types.ts';

const db = useTestDatabase();
let pool: pg.Pool;
let producer: Producer;

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 6 });
  producer = await startProducer(pool, db.url);
});
afterAll(async () => {
  await producer.stop();
  await pool.end();
});

const keyOf = (account: string) => scopedIdempotencyKey('welcome', `account:${account}`);

/** A worker's effect runner: one welcome email per account. */
function runner(sends: string[], claimWaitMs: number): EffectRunner {
  const registry = new EffectRegistry();
  registry.add('test', ['signup'], {
    welcome: external<{ eventId: string; payload: unknown }>({
      scope: ({ payload }) => `account:${(payload as { account: string }).account}`,
      run: ({ event }) => void sends.push(event.eventId),
    }),
  });
  return new EffectRunner({
    pool,
    db: createDb(pool),
    registry,
    logger: pino({ level: 'silent' }),
    claimWaitMs,
  });
}

/** Another worker's claim on an account's key, as `claimExternalEffects` leaves it, for a minute. */
async function claimElsewhere(account: string): Promise<void> {
  await pool.query(
    `insert into idempotency_keys (key, effect, provider, event_id, status, attempts, claimed_at, claim_expires_at)
     values ($1, 'welcome', 'test', 'evt_elsewhere', 'claimed', 1, now(), now() + interval '1 minute')`,
    [keyOf(account)],
  );
}

/** That worker's send failed: the key is free again. */
async function failElsewhere(account: string): Promise<void> {
  await pool.query(`update idempotency_keys set status = 'failed' where key = $1`, [keyOf(account)]);
}

describe('waiting for an external effect key held elsewhere', () => {
  it("finishes the round's own effects while it waits, and sends the waiting one once the key is free", async () => {
    for (const [eventId, account] of [
      ['evt_wait_x1', 'x'],
      ['evt_wait_y1', 'y'],
      ['evt_wait_x2', 'x'],
    ] as const) {
      await producer.send({ eventId, type: 'signup', payload: { account } });
    }
    // Another worker is sending account y's email: it holds y's key.
    await claimElsewhere('y');
    let batch: Promise<unknown> | undefined;
    try {
      const sendsA: string[] = [];
      batch = runner(sendsA, 10_000).runBatch([job('evt_wait_x1'), job('evt_wait_y1')]);
      // x's email is sent and marked; y's waits for its key.
      await waitFor(async () => (await effectRuns(pool, 'evt_wait_x1')).welcome?.status === 'completed', {
        timeout: 5_000,
        message: "x's welcome email marked done",
      });
      expect(sendsA).toEqual(['evt_wait_x1']);

      // Another worker with an event of account x gets through at once (its email was sent already).
      const sendsB: string[] = [];
      const results = await runner(sendsB, 1_000).runBatch([job('evt_wait_x2')]);
      expect(results).toEqual([{ id: 'job-evt_wait_x2', status: 'completed' }]);
      expect(sendsB).toEqual([]);
      expect((await effectRuns(pool, 'evt_wait_x2')).welcome).toMatchObject({ status: 'completed' });

      // The holder's send failed: the waiting email goes out, once.
      await failElsewhere('y');
      expect(await batch).toEqual([
        { id: 'job-evt_wait_x1', status: 'completed' },
        { id: 'job-evt_wait_y1', status: 'completed' },
      ]);
      expect(sendsA).toEqual(['evt_wait_x1', 'evt_wait_y1']);
    } finally {
      await failElsewhere('y');
      await batch?.catch(() => {});
    }
  });
});
