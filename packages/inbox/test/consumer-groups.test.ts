/**
 * Consumer groups inside one process: each group's worker gets the events of its types from its start, with its
 * own status rows, retries and dead letters; the ledger's statements and retention on those rows; a late group's
 * backfill by bulk replay. The cross-process version (two consumer projects, one receiver) is
 * test/consumer-groups.test.ts.
 */
import { insertEvents, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAST_RETRIES, logged, useWorkerHarness, type Producer } from './support/harness.ts';
import { EffectRouteConflictError, readAllEffectRoutes, recordEffectRoutes } from '../src/effect-routes.ts';
import * as ledger from '../src/sql/ledger.ts';
import { PermanentEffectError, type DeadEvent } from '../src/effects/types.ts';
import { getEvent } from '../src/event-store.ts';
import { createInbox, type Inbox, type InboxWorker } from '../src/inbox.ts';
import { ensureQueues, queuesOf } from '../src/queue.ts';
import { effectRoutes, webhookEvents } from '../src/sql/index.ts';
import { readInboxStats, replayEvent, replayEvents, purgeExpired } from '@webhook-inbox/operator';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);
let pool: pg.Pool;
let producer: Producer;
beforeAll(() => {
  ({ pool, producer } = harness);
});

const start = (inbox: Inbox, group?: string): Promise<InboxWorker> =>
  harness.start(inbox, { poolSize: 4, ...(group ? { group } : {}) });

async function logCounts(eventId: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ effect: string; n: number }>(
    'select effect, count(*)::int as n from effect_log where event_id = $1 group by effect',
    [eventId],
  );
  return Object.fromEntries(rows.map((row) => [row.effect, row.n]));
}

async function groupRows(eventId: string): Promise<Record<string, string>> {
  const { rows } = await pool.query<{ consumer_group: string; status: string }>(
    'select consumer_group, status from webhook_event_groups where event_id = $1',
    [eventId],
  );
  return Object.fromEntries(rows.map((row) => [row.consumer_group, row.status]));
}

async function status(eventId: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ status: string }>(
    'select status from webhook_events where event_id = $1',
    [eventId],
  );
  return rows[0]?.status;
}

const settled = (eventId: string, group: string, expected = 'processed') =>
  waitFor(
    async () =>
      (group === 'default' ? await status(eventId) : (await groupRows(eventId))[group]) === expected,
    { timeout: 20_000, message: `${eventId} ${expected} in ${group}` },
  );

describe('consumer groups', () => {
  it('refuses a group name that is not one, before connecting', async () => {
    for (const name of ['Billing', '1team', 'a.b', '', 'x'.repeat(41)]) {
      await expect(createInbox().start({ connectionString: db.url, group: name })).rejects.toThrow(
        /invalid consumer group .*lowercase letter first/,
      );
    }
  });

  it('refuses to start a worker whose effect name another group registered for the type, naming both groups', async () => {
    await start(createInbox().on('test', 'shared.type', { recordIt: logged('recordIt') }), 'default');
    const error = await createInbox()
      .on('test', 'shared.type', { recordIt: logged('recordIt'), other: logged('other') })
      .start({ connectionString: db.url, group: 'analytics', queue: FAST_RETRIES })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EffectRouteConflictError);
    expect((error as Error).message).toMatch(
      /group "analytics".*test shared\.type recordIt \(group "default"\)/,
    );
    // Nothing of the refused group was recorded.
    expect((await readAllEffectRoutes(pool)).filter((r) => r.consumerGroup === 'analytics')).toEqual([]);
  });

  it('delivers each event to every group with effects for its type, from the group start; a bulk replay backfills a range', async () => {
    await start(createInbox().on('test', 'order.paid', { provision: logged('provision') }));
    await producer.send({ eventId: 'late-1', type: 'order.paid' });
    await producer.send({ eventId: 'late-2', type: 'order.paid' });
    await settled('late-1', 'default');
    await settled('late-2', 'default');

    await start(createInbox().on('test', 'order.paid', { analyse: logged('analyse') }), 'reporting');
    await producer.send({ eventId: 'late-3', type: 'order.paid' });
    // A type the group has no effect for gets no row and no job of the group.
    await producer.send({ eventId: 'late-other', type: 'order.refunded' });
    await settled('late-3', 'reporting');
    await settled('late-3', 'default');
    expect(await logCounts('late-3')).toEqual({ provision: 1, analyse: 1 });
    expect(await groupRows('late-1')).toEqual({});
    expect(await groupRows('late-2')).toEqual({});
    expect(await groupRows('late-other')).toEqual({});
    expect(await logCounts('late-1')).toEqual({ provision: 1 });

    // The range from late-2 on: late-2 gets its row and runs; late-3 has nothing left; late-1 is outside.
    const { rows } = await pool.query<{ received_at: Date }>(
      `select received_at from webhook_events where event_id = 'late-2'`,
    );
    const effectsFor = () => ['analyse'];
    const backfill = await replayEvents(
      { pool, boss: producer.boss, effectsFor },
      { provider: 'test', since: rows[0]!.received_at },
      { group: 'reporting' },
    );
    expect(backfill.results.map((r) => [r.eventId, r.previousStatus, r.enqueued])).toEqual([
      ['late-2', 'none', true],
      ['late-3', 'processed', false],
    ]);
    await settled('late-2', 'reporting');
    expect(await logCounts('late-2')).toEqual({ provision: 1, analyse: 1 });
    expect(await groupRows('late-1')).toEqual({});
    expect(await status('late-2')).toBe('processed');

    // The event log shows the group's row; the default status is the event's own.
    const detail = await getEvent(pool, 'test', 'late-2');
    expect(detail?.groups).toMatchObject([{ group: 'reporting', status: 'processed', attempts: 1 }]);
    // A reader limited to some groups sees their part of it, and no event of a type none of them handles.
    const partOf = async (groups: string[]) => {
      const seen = await getEvent(pool, 'test', 'late-2', { visibleTo: groups });
      return (
        seen && { effects: seen.effects.map((run) => run.effect), groups: seen.groups.map((g) => g.group) }
      );
    };
    expect(await partOf(['reporting'])).toEqual({ effects: ['analyse'], groups: ['reporting'] });
    expect(await partOf(['default'])).toEqual({ effects: ['provision'], groups: [] });
    expect(await partOf(['billing'])).toBeUndefined();
    expect(await getEvent(pool, 'test', 'late-other', { visibleTo: ['reporting'] })).toBeUndefined();
  });

  it("retries and dead-letters per group: a failing group's event goes dead there alone, onDead names the group", async () => {
    const dead: DeadEvent[] = [];
    await start(createInbox().on('test', 'invoice.failed', { book: logged('book') }));
    const failing = createInbox({ onDead: (event) => void dead.push(event) }).on('test', 'invoice.failed', {
      score: () => {
        throw new Error('scoring service down');
      },
    });
    await start(failing, 'risk');
    await producer.send({ eventId: 'risky-1', type: 'invoice.failed' });
    await settled('risky-1', 'default');
    await settled('risky-1', 'risk', 'dead');
    await waitFor(() => dead.length === 1);
    expect(dead).toEqual([
      {
        provider: 'test',
        eventId: 'risky-1',
        type: 'invoice.failed',
        lastError: 'score: scoring service down',
        attempts: FAST_RETRIES.retryLimit + 1,
        group: 'risk',
      },
    ]);
    expect(await status('risky-1')).toBe('processed');
    // The job reached the group's own dead-letter queue.
    await waitFor(async () => {
      const { rows } = await pool.query<{ n: number }>(
        `select count(*)::int as n from pgboss.job where name = $1 and data->>'eventId' = 'risky-1'`,
        [queuesOf('risk').deadLetters],
      );
      return rows[0]!.n === 1;
    });
    const stats = await readInboxStats(pool);
    expect(stats.groups).toContainEqual({ group: 'risk', status: 'dead', count: 1 });
    expect(stats.events.dead).toBe(0);
  });

  it('a permanent failure in one group leaves the other groups alone', async () => {
    await start(createInbox().on('test', 'poison.pill', { keep: logged('keep') }));
    await start(
      createInbox().on('test', 'poison.pill', {
        reject: () => {
          throw new PermanentEffectError('never');
        },
      }),
      'strict',
    );
    await producer.send({ eventId: 'pill-1', type: 'poison.pill' });
    await settled('pill-1', 'strict', 'dead');
    await settled('pill-1', 'default');
    expect(await logCounts('pill-1')).toEqual({ keep: 1 });
  });

  it("a replay for a group runs only that group's unfinished effects", async () => {
    await start(createInbox().on('test', 'again.type', { alpha: logged('alpha') }));
    await start(createInbox().on('test', 'again.type', { beta: logged('beta') }), 'betas');
    await producer.send({ eventId: 'again-1', type: 'again.type' });
    await settled('again-1', 'betas');
    await settled('again-1', 'default');
    const replayed = await replayEvent(
      { pool, boss: producer.boss, effectsFor: () => ['beta'] },
      'test',
      'again-1',
      { group: 'betas', forceEffect: 'beta' },
    );
    expect(replayed).toMatchObject({ group: 'betas', previousStatus: 'processed', effects: ['beta'] });
    await waitFor(async () => (await logCounts('again-1')).beta === 2);
    await settled('again-1', 'betas');
    expect(await logCounts('again-1')).toEqual({ alpha: 1, beta: 2 });
  });
});

describe("a group's routes and the receiver's inserts", () => {
  const waitingOnRoutes = async () => {
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from pg_locks where relation = 'effect_routes'::regclass and not granted`,
    );
    return rows[0]!.n;
  };
  const route = (eventType: string, effect: string) => [
    { provider: 'test', eventType, effect, kind: 'database' as const, position: 0 },
  ];

  it('a group gets the events inserted after its routes were committed, and neither waits for the other', async () => {
    // A recording transaction in flight (its insert read the routes before the group's): the routes are recorded
    // without waiting for its commit, and the event is not the group's.
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(
        webhookEvents.insertEvents([
          {
            event: { provider: 'test', eventId: 'race-1', type: 'race.one', payloadText: '{}', headers: {} },
            source: 'webhook',
          },
        ]),
      );
      await recordEffectRoutes(pool, route('race.one', 'raceOne'), 'racers');
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(await groupRows('race-1')).toEqual({});

    // Routes being recorded and not yet committed: an event's insert does not wait for them and reads the routes
    // committed before; the next event, inserted after their commit, is the group's.
    await ensureQueues(producer.boss, FAST_RETRIES, 'racers');
    const locker = await pool.connect();
    try {
      await locker.query('begin');
      await locker.query(effectRoutes.lockEffectRoutes());
      await locker.query(
        `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
         values ('test', 'race.two', 'raceTwo', 'database', 0, 'racers')`,
      );
      expect(await producer.send({ eventId: 'race-2', type: 'race.two' })).toBe('accepted');
      expect(await waitingOnRoutes()).toBe(0);
      await locker.query('commit');
    } finally {
      locker.release();
    }
    expect(await groupRows('race-2')).toEqual({});
    expect(await producer.send({ eventId: 'race-3', type: 'race.two' })).toBe('accepted');
    expect(await groupRows('race-3')).toEqual({ racers: 'received' });
  });

  it("records a group's routes while another transaction holds effect_routes as pg_dump does", async () => {
    await ensureQueues(producer.boss, FAST_RETRIES, 'held');
    const holder = await pool.connect();
    try {
      await holder.query('begin isolation level repeatable read read only');
      await holder.query('lock table effect_routes in access share mode');
      await recordEffectRoutes(pool, route('held.type', 'heldEffect'), 'held');
      expect(await producer.send({ eventId: 'held-1', type: 'held.type' })).toBe('accepted');
      expect(await waitingOnRoutes()).toBe(0);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect((await readAllEffectRoutes(pool)).filter((r) => r.consumerGroup === 'held')).toHaveLength(1);
    expect(await groupRows('held-1')).toEqual({ held: 'received' });
  });
});

describe('ledger statements on group rows', () => {
  const key = { provider: 'test', eventId: 'ledger-g1' };
  beforeAll(async () => {
    await pool.query(
      `insert into webhook_events (provider, event_id, type) values ('test', 'ledger-g1', 'x')`,
    );
    await pool.query(
      `insert into webhook_event_groups (provider, event_id, consumer_group) values ('test', 'ledger-g1', 'g')`,
    );
  });

  it("start, settle and mark dead change the group's row, never webhook_events", async () => {
    const started = await pool.query<ledger.LoadedEventRow>(ledger.startAttempts([key], 'g'));
    expect(started.rows).toMatchObject([{ event_id: 'ledger-g1', type: 'x', attempts: 1, completed: [] }]);
    const receivedAt = started.rows[0]!.received_at;
    expect(await groupRows('ledger-g1')).toEqual({ g: 'processing' });
    // A group the event has no row in: nothing to start.
    expect((await pool.query(ledger.startAttempts([key], 'other'))).rows).toEqual([]);

    const failed = await pool.query<ledger.SettledRow>(
      ledger.settleEvents([{ ...key, receivedAt, attempt: 1, status: 'failed', lastError: 'e: boom' }], 'g'),
    );
    expect(failed.rows).toMatchObject([{ status: 'failed', last_error: 'e: boom', type: 'x' }]);
    const dead = await pool.query(ledger.markDead(key, 'timed out', 'g'));
    expect(dead.rows).toMatchObject([{ status: 'dead', last_error: 'e: boom' }]);
    // Dead once: neither a second mark nor a late dead settlement reports it again.
    expect((await pool.query(ledger.markDead(key, 'again', 'g'))).rows).toEqual([]);
    expect(
      (
        await pool.query(
          ledger.settleEvents([{ ...key, receivedAt, attempt: 1, status: 'dead', lastError: 'x' }], 'g'),
        )
      ).rows,
    ).toEqual([]);
    // A replay's attempt that processes it wins; a late failure never overwrites processed.
    await pool.query(
      ledger.settleEvents([{ ...key, receivedAt, attempt: 1, status: 'processed', lastError: null }], 'g'),
    );
    await pool.query(
      ledger.settleEvents([{ ...key, receivedAt, attempt: 1, status: 'failed', lastError: 'late' }], 'g'),
    );
    expect(await groupRows('ledger-g1')).toEqual({ g: 'processed' });
    expect(await status('ledger-g1')).toBe('received');
  });
});

describe('retention with group rows', () => {
  it('keeps an event while any of its group rows is unfinished; deletes it with its rows after', async () => {
    await pool.query(`
      insert into webhook_events (provider, event_id, type, status, received_at)
      values ('test', 'old-g1', 'x', 'processed', now() - interval '100 days'),
             ('test', 'old-g2', 'x', 'processed', now() - interval '100 days')`);
    await pool.query(`
      insert into webhook_event_groups (provider, event_id, consumer_group, status)
      values ('test', 'old-g1', 'slow', 'received'), ('test', 'old-g2', 'slow', 'dead'),
             ('test', 'old-g2', 'fast', 'processed')`);
    const dry = await purgeExpired(pool, { payloadDays: 30, keyDays: 90, dryRun: true });
    expect(dry.keysDeleted).toBe(1);
    const first = await purgeExpired(pool, { payloadDays: 30, keyDays: 90 });
    expect(first.keysDeleted).toBe(1);
    expect(await status('old-g1')).toBe('processed');
    expect(await status('old-g2')).toBeUndefined();
    expect(await groupRows('old-g2')).toEqual({});

    await pool.query(`update webhook_event_groups set status = 'processed' where event_id = 'old-g1'`);
    expect((await purgeExpired(pool, { payloadDays: 30, keyDays: 90 })).keysDeleted).toBe(1);
    expect(await status('old-g1')).toBeUndefined();
  });

  it("keeps a day's payloads while an event of that day is unfinished in any group", async () => {
    await insertEvents(
      pool,
      `insert into webhook_events (provider, event_id, type, status, received_at)
       values ('test', 'day-kept', 'x', 'processed', date_trunc('day', now()) - interval '50 days' + interval '1 hour'),
              ('test', 'day-dropped', 'x', 'processed', date_trunc('day', now()) - interval '51 days' + interval '1 hour')`,
    );
    await pool.query(`
      insert into webhook_event_groups (provider, event_id, consumer_group, status)
      values ('test', 'day-kept', 'slow', 'failed'), ('test', 'day-dropped', 'slow', 'processed')`);
    const payloads = async () =>
      (
        await pool.query<{ event_id: string }>(
          `select event_id from webhook_event_payloads where event_id like 'day-%' order by 1`,
        )
      ).rows.map((row) => row.event_id);
    expect(await payloads()).toEqual(['day-dropped', 'day-kept']);

    await purgeExpired(pool, { payloadDays: 30, keyDays: 90 });
    expect(await payloads()).toEqual(['day-kept']);

    await pool.query(`update webhook_event_groups set status = 'dead' where event_id = 'day-kept'`);
    await purgeExpired(pool, { payloadDays: 30, keyDays: 90 });
    expect(await payloads()).toEqual([]);
  });
});
