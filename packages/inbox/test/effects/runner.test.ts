import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createInbox, type Inbox, type InboxWorker } from '../../src/inbox.ts';
import { configureQueues, DEAD_LETTER_QUEUE, EVENTS_QUEUE } from '../../src/queue.ts';
import {
  effectRuns,
  eventRow,
  FAST_RETRIES,
  logged,
  startProducer,
  useWorkerHarness,
  type Producer,
} from '../support/harness.ts';
import { eventIdempotencyKey, scopedIdempotencyKey } from '../../src/effects/keys.ts';
import { database, external, PermanentEffectError, type DeadEvent } from '../../src/effects/types.ts';
import { getEvent } from '../../src/event-store.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);
let pool: pg.Pool;
let producer: Producer;
beforeAll(() => {
  ({ pool, producer } = harness);
});

const start = (inbox: Inbox, options: { batchSize?: number } = {}): Promise<InboxWorker> =>
  harness.start(inbox, options);

async function logCount(eventId: string, effect: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'select count(*)::int as n from effect_log where event_id = $1 and effect = $2',
    [eventId, effect],
  );
  return rows[0]?.n ?? 0;
}

const processed = (eventId: string) =>
  waitFor(async () => (await eventRow(pool, eventId))?.status === 'processed', {
    timeout: 15_000,
    message: `${eventId} processed`,
  });

describe('effects', () => {
  it('runs each effect of an event once, and never again on a redelivery or a replay', async () => {
    const sent: string[] = [];
    const inbox = createInbox().on('test', 'thing.created', {
      first: logged('first'),
      notify: external({
        run: ({ event }) => {
          sent.push(event.eventId);
        },
      }),
      second: logged('second'),
    });
    await start(inbox);

    expect(await producer.send({ eventId: 'evt_once', type: 'thing.created' })).toBe('accepted');
    await processed('evt_once');
    // The provider redelivers: recorded already, nothing enqueued.
    expect(await producer.send({ eventId: 'evt_once', type: 'thing.created' })).toBe('duplicate');
    // An operator replays: a second job for the same event runs, and finds everything completed.
    await producer.boss.send(EVENTS_QUEUE, { provider: 'test', eventId: 'evt_once' });
    await waitFor(async () => (await eventRow(pool, 'evt_once'))?.attempts === 2, { timeout: 15_000 });
    await processed('evt_once');

    expect(await logCount('evt_once', 'first')).toBe(1);
    expect(await logCount('evt_once', 'second')).toBe(1);
    expect(sent).toEqual(['evt_once']);
    const runs = await effectRuns(pool, 'evt_once');
    expect(Object.values(runs).map((r) => [r.effect, r.status, r.attempts])).toEqual(
      expect.arrayContaining([
        ['first', 'completed', 1],
        ['notify', 'completed', 1],
        ['second', 'completed', 1],
      ]),
    );
    const { rows } = await pool.query<{ idempotency_key: string }>(
      `select idempotency_key from effect_runs where event_id = 'evt_once' and effect = 'notify'`,
    );
    expect(rows[0]?.idempotency_key).toBe(eventIdempotencyKey('test', 'evt_once', 'notify'));
  });

  it('retries a failing effect with its own attempt count; the others ran once', async () => {
    let calls = 0;
    const inbox = createInbox().on('test', 'flaky', {
      steady: logged('steady'),
      flaky: async ({ event, tx, attempt }) => {
        calls++;
        if (attempt <= 2) throw new Error(`upstream 503 (attempt ${attempt})`);
        await logged('flaky')({ event, tx } as never);
      },
      alsoSteady: external({ run: async () => {} }),
    });
    await start(inbox);

    await producer.send({ eventId: 'evt_flaky', type: 'flaky' });
    await processed('evt_flaky');

    expect(calls).toBe(3);
    expect(await logCount('evt_flaky', 'steady')).toBe(1);
    expect(await logCount('evt_flaky', 'flaky')).toBe(1);
    const runs = await effectRuns(pool, 'evt_flaky');
    expect(runs.steady).toMatchObject({ status: 'completed', attempts: 1 });
    expect(runs.alsoSteady).toMatchObject({ status: 'completed', attempts: 1 });
    expect(runs.flaky).toMatchObject({ status: 'completed', attempts: 3, last_error: null });
    expect(await eventRow(pool, 'evt_flaky')).toMatchObject({ status: 'processed', attempts: 3 });
  });

  it('between attempts the event says failed, with the error; retries back off exponentially', async () => {
    const backoff = { ...FAST_RETRIES, retryLimit: 2, retryDelay: 1, retryBackoff: true, retryDelayMax: 10 };
    const attemptsAt: number[] = [];
    const statusesBetween: string[] = [];
    const inbox = createInbox().on('test', 'backoff', {
      later: ({ attempt }) => {
        attemptsAt.push(Date.now());
        if (attempt < 3) throw new Error(`try ${attempt} fails`);
      },
    });
    await harness.start(inbox, { queue: backoff, poolSize: 20 });
    const slow = await startProducer(pool, db.url, backoff);
    try {
      await slow.send({ eventId: 'evt_backoff', type: 'backoff' });
      await waitFor(
        async () => {
          const row = await eventRow(pool, 'evt_backoff');
          if (row?.status === 'failed') statusesBetween.push(`${row.status}: ${row.last_error}`);
          return row?.status === 'processed';
        },
        { timeout: 20_000 },
      );
    } finally {
      await slow.stop();
      await configureQueues(producer.boss, FAST_RETRIES);
    }
    expect(statusesBetween).toContain('failed: later: try 1 fails');
    expect(statusesBetween).toContain('failed: later: try 2 fails');
    const [a, b, c] = attemptsAt as [number, number, number];
    // retryDelay * 2^n * [1, 2): the first retry waits >= 1 s, the second >= 2 s.
    expect(b - a).toBeGreaterThanOrEqual(950);
    expect(c - b).toBeGreaterThanOrEqual(1_950);
    expect((await effectRuns(pool, 'evt_backoff')).later).toMatchObject({ status: 'completed', attempts: 3 });
  });

  it('ends a poison event dead with its last error, fires onDead once, and leaves other events alone', async () => {
    const dead: DeadEvent[] = [];
    const inbox = createInbox({ onDead: (event) => void dead.push(event) }).on('test', ['poison', 'fine'], {
      check: ({ event }) => {
        if (event.type === 'poison') throw new Error('cannot handle this payload');
      },
      record: logged('record'),
    });
    await start(inbox);

    await producer.send({ eventId: 'evt_poison', type: 'poison' });
    await producer.send({ eventId: 'evt_fine', type: 'fine' });
    await processed('evt_fine');
    await waitFor(async () => (await eventRow(pool, 'evt_poison'))?.status === 'dead', { timeout: 15_000 });

    // retryLimit 2: three attempts in all.
    expect(await eventRow(pool, 'evt_poison')).toEqual({
      status: 'dead',
      attempts: 3,
      last_error: 'check: cannot handle this payload',
    });
    // The effect that can succeed did, once; the failing one kept its own count.
    expect(await logCount('evt_poison', 'record')).toBe(1);
    const runs = await effectRuns(pool, 'evt_poison');
    expect(runs.check).toMatchObject({ status: 'failed', attempts: 3 });
    await waitFor(() => dead.length === 1);
    expect(dead).toEqual([
      {
        provider: 'test',
        eventId: 'evt_poison',
        type: 'poison',
        lastError: 'check: cannot handle this payload',
        attempts: 3,
        group: 'default',
      },
    ]);
    // The job went to the dead-letter queue.
    const letters = await waitFor(async () => {
      const jobs = await producer.boss.findJobs(DEAD_LETTER_QUEUE, { data: { eventId: 'evt_poison' } });
      return jobs.length > 0 && jobs;
    });
    expect(letters).toHaveLength(1);
    expect(await eventRow(pool, 'evt_fine')).toMatchObject({ status: 'processed', attempts: 1 });
  });

  it('sends a permanent failure to dead at once, without retries', async () => {
    const inbox = createInbox().on('test', 'malformed', {
      parse: () => {
        throw new PermanentEffectError('customer is missing');
      },
    });
    await start(inbox);
    await producer.send({ eventId: 'evt_malformed', type: 'malformed' });
    await waitFor(async () => (await eventRow(pool, 'evt_malformed'))?.status === 'dead', {
      timeout: 15_000,
    });
    expect(await eventRow(pool, 'evt_malformed')).toMatchObject({
      attempts: 1,
      last_error: 'parse: customer is missing',
    });
  });

  it('marks an event dead when its last attempt never reports back (the job times out)', async () => {
    let release!: () => void;
    const hang = new Promise<void>((resolve) => (release = resolve));
    const dead: DeadEvent[] = [];
    const inbox = createInbox({ onDead: (event) => void dead.push(event) }).on('test', 'hangs', {
      hang: async () => hang,
    });
    await harness.start(inbox, {
      queue: { ...FAST_RETRIES, retryLimit: 0, expireInSeconds: 1 },
      poolSize: 4,
    });
    // The job carries the queue's settings at send time: this producer sends with the same ones.
    const quick = await startProducer(pool, db.url, { ...FAST_RETRIES, retryLimit: 0, expireInSeconds: 1 });
    try {
      await quick.send({ eventId: 'evt_hangs', type: 'hangs' });
      await waitFor(async () => (await eventRow(pool, 'evt_hangs'))?.status === 'dead', { timeout: 15_000 });
      expect((await eventRow(pool, 'evt_hangs'))?.last_error).toMatch(/exceeded|timed out|did not finish/);
      expect(dead.map((d) => d.eventId)).toEqual(['evt_hangs']);
    } finally {
      release();
      await quick.stop();
      // The worker changed the queue's settings; put the suite's back for what runs next.
      await configureQueues(producer.boss, FAST_RETRIES);
    }
  });

  it('runs a scoped effect once per scope, whichever event asks', async () => {
    const sent: string[] = [];
    const inbox = createInbox().on('test', 'signup', {
      welcome: external<{ eventId: string; payload: unknown }>({
        scope: ({ payload }) => `account:${(payload as { account: string }).account}`,
        run: ({ event }) => void sent.push(event.eventId),
      }),
      firstSeen: database<{ eventId: string; payload: unknown }>({
        scope: ({ payload }) => `account:${(payload as { account: string }).account}`,
        run: logged('firstSeen'),
      }),
    });
    await start(inbox);
    await producer.send({ eventId: 'evt_signup_1', type: 'signup', payload: { account: 'acct_1' } });
    await producer.send({ eventId: 'evt_signup_2', type: 'signup', payload: { account: 'acct_1' } });
    await producer.send({ eventId: 'evt_signup_3', type: 'signup', payload: { account: 'acct_2' } });
    await Promise.all(['evt_signup_1', 'evt_signup_2', 'evt_signup_3'].map(processed));

    expect(sent).toHaveLength(2);
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from effect_log where effect = 'firstSeen' and event_id like 'evt_signup_%'`,
    );
    expect(rows[0]?.n).toBe(2);
    // Both events' ledgers say completed: for the second, under the scope's key.
    expect((await effectRuns(pool, 'evt_signup_2')).welcome).toMatchObject({ status: 'completed' });
    const keys = await pool.query<{ key: string; status: string; attempts: number }>(
      `select key, status, attempts from idempotency_keys where key = $1`,
      [scopedIdempotencyKey('welcome', 'account:acct_1')],
    );
    expect(keys.rows).toEqual([expect.objectContaining({ status: 'completed', attempts: 1 })]);
    // The event whose welcome another event of its account sent names that event; the sender names none. (Either
    // event of acct_1 may have run `firstSeen`: workers take them in parallel.)
    const [sender = ''] = sent.filter((id) => id !== 'evt_signup_3');
    const other = sender === 'evt_signup_1' ? 'evt_signup_2' : 'evt_signup_1';
    const welcomeBy = async (id: string) =>
      (await getEvent(pool, 'test', id))?.completedBy.filter((row) => row.effect === 'welcome');
    expect(await welcomeBy(other)).toEqual([
      { effect: 'welcome', provider: 'test', eventId: sender, completedAt: expect.any(Date) as unknown },
    ]);
    expect(await welcomeBy(sender)).toEqual([]);
    expect((await getEvent(pool, 'test', 'evt_signup_3'))?.completedBy).toEqual([]);
  });

  it('two workers on the same queue run each effect once', async () => {
    const sends = new Map<string, number>();
    const make = () =>
      createInbox().on('test', 'busy', {
        one: logged('one'),
        mail: external({
          run: ({ idempotencyKey }) => void sends.set(idempotencyKey, (sends.get(idempotencyKey) ?? 0) + 1),
        }),
        two: logged('two'),
      });
    await start(make(), { batchSize: 7 });
    await start(make(), { batchSize: 7 });

    const ids = Array.from({ length: 200 }, (_, i) => `evt_busy_${i}`);
    await Promise.all(ids.map((eventId) => producer.send({ eventId, type: 'busy' })));
    // Replays of every event while they are being worked: each is a second job for the same event.
    await Promise.all(ids.map((eventId) => producer.boss.send(EVENTS_QUEUE, { provider: 'test', eventId })));
    await waitFor(
      async () => {
        const { rows } = await pool.query<{ n: number }>(
          `select count(*)::int as n from webhook_events where event_id like 'evt_busy_%' and status = 'processed'`,
        );
        const { rows: jobs } = await pool.query<{ n: number }>(
          `select count(*)::int as n from pgboss.job where name = $1 and state < 'completed'`,
          [EVENTS_QUEUE],
        );
        return rows[0]?.n === ids.length && jobs[0]?.n === 0;
      },
      { timeout: 90_000 },
    );

    const { rows } = await pool.query<{ effect: string; n: number; events: number }>(
      `select effect, count(*)::int as n, count(distinct event_id)::int as events
         from effect_log where event_id like 'evt_busy_%' group by effect order by effect`,
    );
    expect(rows).toEqual([
      { effect: 'one', n: 200, events: 200 },
      { effect: 'two', n: 200, events: 200 },
    ]);
    expect(sends.size).toBe(200);
    expect([...sends.values()].every((n) => n === 1)).toBe(true);
  });

  it('completes events with no registered effects, and rejects bad registrations', async () => {
    await start(createInbox().on('test', 'other', { x: logged('x') }));
    await producer.send({ eventId: 'evt_unrouted', type: 'nobody.listens' });
    await processed('evt_unrouted');
    expect(await effectRuns(pool, 'evt_unrouted')).toEqual({});

    expect(() => createInbox().on('test', 'a', { 'bad name': logged('x') })).toThrow(/must match/);
    expect(() =>
      createInbox()
        .on('test', 'a', { x: logged('x') })
        .on('test', 'a', { x: logged('x') }),
    ).toThrow(/registered twice/);
  });
});
