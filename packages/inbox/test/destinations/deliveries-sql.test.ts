/**
 * A delivery's two composed statements (`sql/deliveries.ts`) against PostgreSQL: its start reads the breaker's gate
 * and the event, claims the key and takes a slot in one round trip; its end writes the attempt's row, the key's
 * mark, the breaker and the freed slot in one, each part exactly as the table's own statement would.
 */
import { createPool } from '@webhook-inbox/db';
import { insertEvents, useTestDatabase } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { eventIdempotencyKey } from '../../src/effects/keys.ts';
import {
  deliveries,
  destinationSlots,
  destinationStates,
  webhookEvents,
  type Statement,
} from '../../src/sql/index.ts';
import { useWorkerHarness } from '../support/harness.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);

const one = async <T extends object>(statement: Statement) =>
  (await harness.pool.query<T>(statement)).rows[0];

/** `destination`'s delivery of `eventId`: its key's ref. */
function refOf(destination: string, eventId: string) {
  const effect = `destination.${destination}`;
  return { provider: 'test', eventId, effect, idempotencyKey: eventIdempotencyKey('test', eventId, effect) };
}

/** A destination registered with `slots` slots. */
async function registered(destination: string, slots = 1): Promise<void> {
  await harness.pool.query(
    destinationStates.registerDestinations([{ name: destination, url: 'https://x.example/h' }]),
  );
  await harness.pool.query(destinationSlots.registerSlots(destination, slots));
}

/** The start of `destination`'s delivery of `eventId` (one slot, leases of a minute). */
async function start(destination: string, eventId: string, slots = 1) {
  return one<deliveries.DeliveryStart>(
    deliveries.startDelivery(
      { name: destination, probeAfterMs: 1_000 },
      refOf(destination, eventId),
      60_000,
      {
        destination,
        concurrency: slots,
        leaseMs: 60_000,
      },
    ),
  );
}

/** A recorded event, its destination registered with one slot, its start made: the key claimed, the slot taken. */
async function claimedDelivery(destination: string, eventId: string) {
  expect(await harness.producer.send({ eventId, type: 'thing.created' })).toBe('accepted');
  await registered(destination);
  const started = await start(destination, eventId);
  return endOf(destination, refOf(destination, eventId), started!);
}

/** The end of a started delivery: a 2xx after 3 ms. */
function endOf(
  destination: string,
  ref: ReturnType<typeof refOf>,
  started: deliveries.DeliveryStart,
): deliveries.DeliveryEnd {
  return {
    destination,
    ref,
    fence: { keyAttempts: started.keyAttempts!, token: started.claimToken! },
    slot: { slot: started.slot!, token: started.slotToken! },
    attempt: {
      provider: 'test',
      eventId: ref.eventId,
      effect: ref.effect,
      startedAt: new Date(),
      finishedAt: new Date(),
      durationMs: 3,
      outcome: 'completed',
      error: null,
      worker: 'test-worker',
      jobId: null,
      responseStatus: 204,
      responseExcerpt: '',
    },
  };
}

async function destinationRow(name: string) {
  return one<{ state: string; consecutive_failures: number; updated_at: Date; reason: string | null }>({
    text: 'select state, consecutive_failures, updated_at, reason from destination_states where name = $1',
    values: [name],
  });
}

async function heldSlots(name: string): Promise<number> {
  const row = await one<{ n: number }>({
    text: `select count(*)::int as n from destination_slots where destination = $1 and held_until > now()`,
    values: [name],
  });
  return row!.n;
}

async function keyRow(ref: { idempotencyKey: string }) {
  return one<{ status: string; attempts: number }>({
    text: 'select status, attempts from idempotency_keys where key = $1',
    values: [ref.idempotencyKey],
  });
}

describe('a delivery in two statements', () => {
  it('starts with the gate, the event, the key claimed and a slot taken', async () => {
    expect(await harness.producer.send({ eventId: 'evt_start', type: 'thing.created' })).toBe('accepted');
    await registered('start-api');
    const started = await start('start-api', 'evt_start');
    expect(started).toMatchObject({
      state: 'active',
      probe: false,
      type: 'thing.created',
      keyAttempts: 1,
      priorStatus: null,
      heldUntil: null,
      slot: 0,
    });
    expect(started!.claimToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(started!.slotToken).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await one<{ payload: string }>(webhookEvents.selectEvent('test', 'evt_start'));
    expect(started!.payload).toBe(stored!.payload);
    expect(started!.payload).not.toBeNull();
    expect(await keyRow(refOf('start-api', 'evt_start'))).toEqual({ status: 'claimed', attempts: 1 });
    expect(await heldSlots('start-api')).toBe(1);
  });

  it('a key another attempt holds: nothing claimed, no slot taken, held until its lease ends', async () => {
    expect(await harness.producer.send({ eventId: 'evt_twice', type: 'thing.created' })).toBe('accepted');
    await registered('twice-api', 2);
    const first = await start('twice-api', 'evt_twice', 2);
    const second = await start('twice-api', 'evt_twice', 2);
    expect(second).toMatchObject({ keyAttempts: null, claimToken: null, priorStatus: 'claimed', slot: null });
    expect(second!.heldUntil!.getTime()).toBeGreaterThan(Date.now() + 30_000);
    expect(await heldSlots('twice-api')).toBe(1);
    expect(first!.slot).toBe(0);

    // Completed: never claimed again, and not held.
    const ref = refOf('twice-api', 'evt_twice');
    await harness.pool.query(`update idempotency_keys set status = 'completed' where key = $1`, [
      ref.idempotencyKey,
    ]);
    expect(await start('twice-api', 'evt_twice', 2)).toMatchObject({
      keyAttempts: null,
      priorStatus: 'completed',
      heldUntil: null,
      slot: null,
    });
    expect(await heldSlots('twice-api')).toBe(1);
  });

  it('every slot held: the key claimed all the same, no slot', async () => {
    await claimedDelivery('full-api', 'evt_full_1');
    expect(await harness.producer.send({ eventId: 'evt_full_2', type: 'thing.created' })).toBe('accepted');
    const started = await start('full-api', 'evt_full_2');
    expect(started).toMatchObject({ keyAttempts: 1, slot: null, slotToken: null });
    expect(await keyRow(refOf('full-api', 'evt_full_2'))).toEqual({ status: 'claimed', attempts: 1 });
    expect(await heldSlots('full-api')).toBe(1);
  });

  it('claims nothing and takes no slot for a paused destination, a closed circuit, or an event gone', async () => {
    expect(await harness.producer.send({ eventId: 'evt_wait', type: 'thing.created' })).toBe('accepted');
    await registered('paused-api');
    await harness.pool.query(`update destination_states set state = 'paused' where name = 'paused-api'`);
    expect(await start('paused-api', 'evt_wait')).toMatchObject({
      state: 'paused',
      type: 'thing.created',
      keyAttempts: null,
      slot: null,
    });

    await registered('open-api');
    await harness.pool.query(
      `update destination_states set state = 'open', probe_at = now() + interval '1 minute' where name = 'open-api'`,
    );
    expect(await start('open-api', 'evt_wait')).toMatchObject({
      state: 'open',
      probe: false,
      keyAttempts: null,
    });

    await registered('purged-api');
    expect(await start('purged-api', 'evt_none')).toMatchObject({
      state: 'active',
      type: null,
      payload: null,
      keyAttempts: null,
      slot: null,
    });
    for (const name of ['paused-api', 'open-api', 'purged-api']) expect(await heldSlots(name)).toBe(0);
    const keys = await harness.pool.query(
      `select key from idempotency_keys where effect in ('destination.paused-api', 'destination.open-api', 'destination.purged-api')`,
    );
    expect(keys.rows).toEqual([]);

    // A due probe is taken, and that delivery claims and sends.
    await harness.pool.query(`update destination_states set probe_at = now() where name = 'open-api'`);
    expect(await start('open-api', 'evt_wait')).toMatchObject({
      state: 'open',
      probe: true,
      keyAttempts: 1,
      slot: 0,
    });
    expect(await start('no-such-api', 'evt_wait')).toMatchObject({ state: null, type: 'thing.created' });
  });

  it('a 2xx: the attempt row, the key completed, the failures reset, the slot freed', async () => {
    const end = await claimedDelivery('ok-api', 'evt_ok');
    await harness.pool.query(`update destination_states set consecutive_failures = 3 where name = 'ok-api'`);
    expect(await heldSlots('ok-api')).toBe(1);

    expect(await one(deliveries.deliverySucceeded(end))).toEqual({ completed: true, attemptAdded: true });
    const key = await one<{ status: string }>({
      text: 'select status from idempotency_keys where key = $1',
      values: [end.ref.idempotencyKey],
    });
    expect(key?.status).toBe('completed');
    expect(await destinationRow('ok-api')).toMatchObject({ state: 'active', consecutive_failures: 0 });
    expect(await heldSlots('ok-api')).toBe(0);
    const attempts = await harness.pool.query(
      `select attempt, outcome, response_status from effect_attempts where event_id = 'evt_ok' and effect = $1`,
      [end.ref.effect],
    );
    expect(attempts.rows).toEqual([{ attempt: 1, outcome: 'completed', response_status: 204 }]);

    // The same claim again finds its key completed: `completed` false, nothing marked twice.
    expect(await one(deliveries.deliverySucceeded(end))).toEqual({ completed: false, attemptAdded: true });
  });

  it('a 2xx leaves an active destination without failures alone within the second of its last success', async () => {
    const end = await claimedDelivery('quiet-api', 'evt_quiet');
    await harness.pool.query(
      `update destination_states set last_success_at = now(), updated_at = '2000-01-01' where name = 'quiet-api'`,
    );
    expect(await one(deliveries.deliverySucceeded(end))).toEqual({ completed: true, attemptAdded: true });
    expect((await destinationRow('quiet-api'))!.updated_at.toISOString()).toBe('2000-01-01T00:00:00.000Z');
  });

  it('a failure: the key released, the circuit opened at the threshold; a 410 pauses', async () => {
    const end = await claimedDelivery('down-api', 'evt_down');
    const failed = { ...end, attempt: { ...end.attempt, outcome: 'failed' as const, error: 'HTTP 503' } };
    await harness.pool.query(
      `update destination_states set consecutive_failures = 4 where name = 'down-api'`,
    );
    const move = { kind: 'failure' as const, threshold: 5, probeAfterMs: 30_000, cause: 'HTTP 503' };
    expect(await one(deliveries.deliveryFailed(failed, 'HTTP 503', move))).toEqual({
      state: 'open',
      attemptAdded: true,
    });
    const key = await one<{ status: string; last_error: string }>({
      text: 'select status, last_error from idempotency_keys where key = $1',
      values: [end.ref.idempotencyKey],
    });
    expect(key).toEqual({ status: 'failed', last_error: 'HTTP 503' });
    expect(await destinationRow('down-api')).toMatchObject({
      state: 'open',
      consecutive_failures: 5,
      reason: '5 failures in a row, the last: HTTP 503',
    });
    expect(await heldSlots('down-api')).toBe(0);

    const gone = await claimedDelivery('gone-api', 'evt_gone');
    const reason = '410 Gone from https://x.example';
    expect(await one(deliveries.deliveryFailed(gone, 'HTTP 410', { kind: 'pause', reason }))).toEqual({
      state: 'paused',
      attemptAdded: true,
    });
    expect(await destinationRow('gone-api')).toMatchObject({ state: 'paused', reason });
  });

  it('its start and its end are planned once per connection: PostgreSQL runs their generic plans after five', async () => {
    await registered('plan-api', 8);
    // Tables of a working inbox's size, analysed: the planner prices arrays of unknown length against them.
    await insertEvents(
      harness.pool,
      `insert into webhook_events (provider, event_id, type, status, received_at)
       select 'test', 'evt_old_' || g, 'thing.created', 'processed', now() from generate_series(1, 3000) g`,
    );
    await harness.pool.query(
      `insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms, outcome,
                                    worker, job_id)
       select 'test', 'evt_old_' || g, 'destination.plan-api', 1, now(), now(), 1, 'completed', 'w', null
         from generate_series(1, 3000) g`,
    );
    await harness.pool.query('analyze webhook_events, effect_attempts');
    // A connection of its own, on which neither statement has run yet.
    const pool = createPool({ connectionString: db.url, max: 1 });
    const client = await pool.connect();
    try {
      for (let i = 0; i < 8; i++) {
        const eventId = `evt_plan_${i}`;
        expect(await harness.producer.send({ eventId, type: 'thing.created' })).toBe('accepted');
        const ref = refOf('plan-api', eventId);
        const {
          rows: [started],
        } = await client.query<deliveries.DeliveryStart>(
          deliveries.startDelivery({ name: 'plan-api', probeAfterMs: 1_000 }, ref, 60_000, {
            destination: 'plan-api',
            concurrency: 8,
            leaseMs: 60_000,
          }),
        );
        const end = endOf('plan-api', ref, started!);
        await client.query(deliveries.deliverySucceeded(end));
      }
      const { rows } = await client.query<{ name: string; generic_plans: number }>(
        `select name, generic_plans::int from pg_prepared_statements
          where name in ('webhook_inbox_start_delivery', 'webhook_inbox_delivery_succeeded') order by name`,
      );
      // The first five runs are planned for their values; from the sixth on, the cached generic plan is run.
      expect(rows).toEqual([
        { name: 'webhook_inbox_delivery_succeeded', generic_plans: 3 },
        { name: 'webhook_inbox_start_delivery', generic_plans: 3 },
      ]);
    } finally {
      client.release();
      await pool.end();
    }
  });
});
