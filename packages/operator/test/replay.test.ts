import { createPool } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEffectLog,
  effectRuns,
  eventRow,
  FAST_RETRIES,
  startProducer,
  type Producer,
} from '../../inbox/test/support/harness.ts';
import { createInbox, external, type DatabaseEffectFn, type InboxWorker } from '@webhook-inbox/inbox';
import { replayEvents } from '../src/bulk-replay.ts';
import { replayEvent, ReplayError, type ReplayDeps } from '../src/replay.ts';
import type { Principal } from '../src/access/roles.ts';

const db = useTestDatabase();
const OPERATOR: Principal = {
  actor: 'ops@example.com',
  role: 'operator',
  method: 'oidc',
  groups: null,
  address: '10.0.0.7',
};
let pool: pg.Pool;
let producer: Producer;
let worker: InboxWorker;
let deps: ReplayDeps;

/** The downstream of the external effect: down until the test brings it back. */
const downstream = { up: false, delivered: [] as string[] };

const logged =
  (name: string): DatabaseEffectFn<{ eventId: string }> =>
  async ({ event, tx }) => {
    await tx.execute(sql`insert into effect_log (event_id, effect) values (${event.eventId}, ${name})`);
  };

const inbox = createInbox().on('test', 'order.paid', {
  record: logged('record'),
  notify: external({
    run: ({ event }) => {
      if (!downstream.up) throw new Error('downstream unavailable');
      downstream.delivered.push(event.eventId);
    },
  }),
});

async function logCount(eventId: string, effect: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'select count(*)::int as n from effect_log where event_id = $1 and effect = $2',
    [eventId, effect],
  );
  return rows[0]?.n ?? 0;
}

async function jobCount(eventId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from pgboss.job where name = 'webhook-events' and data->>'eventId' = $1`,
    [eventId],
  );
  return rows[0]?.n ?? 0;
}

const settled = (eventId: string, status: string) =>
  waitFor(async () => (await eventRow(pool, eventId))?.status === status, {
    timeout: 20_000,
    message: `${eventId} ${status}`,
  });

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 5 });
  await createEffectLog(pool);
  producer = await startProducer(pool, db.url, { ...FAST_RETRIES, retryLimit: 1 });
  worker = await inbox.start({
    connectionString: db.url,
    queue: { ...FAST_RETRIES, retryLimit: 1 },
    pollingIntervalSeconds: 0.5,
    poolSize: 6,
  });
  deps = { pool, boss: producer.boss, effectsFor: (p, t) => inbox.effectsFor(p, t) };
});

afterAll(async () => {
  await worker?.stop({ timeoutMs: 5_000 });
  await producer?.stop();
  await pool?.end();
});

describe('replay', () => {
  it('re-runs only the failed effect once the downstream recovers; a dry run changes nothing', async () => {
    await producer.send({ eventId: 'evt_r1', type: 'order.paid' });
    await settled('evt_r1', 'dead');
    expect(await effectRuns(pool, 'evt_r1')).toMatchObject({
      record: { status: 'completed', attempts: 1 },
      notify: { status: 'failed', last_error: 'downstream unavailable' },
    });

    const jobsBefore = await jobCount('evt_r1');
    const dry = await replayEvent(deps, 'test', 'evt_r1', { dryRun: true });
    expect(dry).toMatchObject({ effects: ['notify'], previousStatus: 'dead', enqueued: false, dryRun: true });
    expect(await eventRow(pool, 'evt_r1')).toMatchObject({ status: 'dead' });
    expect(await jobCount('evt_r1')).toBe(jobsBefore);

    downstream.up = true;
    const replayed = await replayEvent(deps, 'test', 'evt_r1');
    expect(replayed).toMatchObject({ effects: ['notify'], enqueued: true });
    await settled('evt_r1', 'processed');
    expect(downstream.delivered.filter((id) => id === 'evt_r1')).toHaveLength(1);
    expect(await logCount('evt_r1', 'record')).toBe(1);
    expect(await effectRuns(pool, 'evt_r1')).toMatchObject({
      record: { status: 'completed', attempts: 1 },
      notify: { status: 'completed' },
    });
  });

  it('runs nothing for a fully processed event, and re-runs a forced effect, recorded as forced', async () => {
    downstream.up = true;
    await producer.send({ eventId: 'evt_r2', type: 'order.paid' });
    await settled('evt_r2', 'processed');

    const jobsBefore = await jobCount('evt_r2');
    const nothing = await replayEvent(deps, 'test', 'evt_r2', { auditAs: OPERATOR });
    expect(nothing).toMatchObject({ effects: [], enqueued: false, previousStatus: 'processed' });
    expect(await jobCount('evt_r2')).toBe(jobsBefore);
    // The operator's request is on record, with who, from where and when (was unaudited before).
    const { rows: audited } = await pool.query(
      `select actor, role, auth_method, remote_address, action, target, details, at > now() - interval '1 hour' as recent
         from audit_log where target = 'test evt_r2'`,
    );
    expect(audited).toEqual([
      {
        actor: OPERATOR.actor,
        role: 'operator',
        auth_method: 'oidc',
        remote_address: '10.0.0.7',
        action: 'replay',
        target: 'test evt_r2',
        details: {
          group: 'default',
          forced: null,
          effects: [],
          previousStatus: 'processed',
          outcome: 'nothing_to_replay',
        },
        recent: true,
      },
    ]);

    const forced = await replayEvent(deps, 'test', 'evt_r2', { forceEffect: 'record' });
    expect(forced).toMatchObject({ effects: ['record'], forced: 'record', enqueued: true });
    await waitFor(async () => (await logCount('evt_r2', 'record')) === 2, { timeout: 20_000 });
    await settled('evt_r2', 'processed');
    const { rows } = await pool.query<{ forced: boolean }>(
      `select forced_at is not null as forced from effect_runs where event_id = 'evt_r2' and effect = 'record'`,
    );
    expect(rows).toEqual([{ forced: true }]);
    expect(downstream.delivered.filter((id) => id === 'evt_r2')).toHaveLength(1);
  });

  it('refuses an unknown event or effect', async () => {
    await expect(replayEvent(deps, 'test', 'evt_missing')).rejects.toMatchObject({ code: 'not_found' });
    downstream.up = true;
    await producer.send({ eventId: 'evt_r3', type: 'order.paid' });
    await settled('evt_r3', 'processed');
    await expect(replayEvent(deps, 'test', 'evt_r3', { forceEffect: 'nope' })).rejects.toBeInstanceOf(
      ReplayError,
    );
  });

  it('bulk: records its request once, not once per finished event it passes over', async () => {
    const before = await pool.query(`select count(*)::int as n from audit_log`);
    const { results } = await replayEvents(
      deps,
      { status: 'processed', provider: 'test', type: 'order.paid' },
      { auditAs: OPERATOR },
    );
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((result) => !result.enqueued)).toBe(true);
    expect((await pool.query(`select count(*)::int as n from audit_log`)).rows).toEqual(before.rows);
  });

  it('bulk: replays every dead event of a type', async () => {
    downstream.up = false;
    await producer.send({ eventId: 'evt_b1', type: 'order.paid' });
    await producer.send({ eventId: 'evt_b2', type: 'order.paid' });
    await settled('evt_b1', 'dead');
    await settled('evt_b2', 'dead');
    downstream.up = true;
    const { results } = await replayEvents(deps, { status: 'dead', provider: 'test', type: 'order.paid' });
    expect(results.map((r) => r.eventId).sort()).toEqual(['evt_b1', 'evt_b2']);
    await settled('evt_b1', 'processed');
    await settled('evt_b2', 'processed');
  });
});
