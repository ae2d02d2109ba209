/**
 * A delivery's two composed statements (`sql/deliveries.ts`) against PostgreSQL: its start reads the breaker's gate
 * and the event in one round trip; its end writes the attempt's row, the key's mark, the breaker and the freed slot
 * in one, each part exactly as the table's own statement would.
 */
import { useTestDatabase } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { eventIdempotencyKey } from '../../src/effects/keys.ts';
import {
  deliveries,
  destinationSlots,
  destinationStates,
  idempotencyKeys,
  webhookEvents,
  type Statement,
} from '../../src/sql/index.ts';
import { useWorkerHarness } from '../support/harness.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);

const one = async <T extends object>(statement: Statement) =>
  (await harness.pool.query<T>(statement)).rows[0];

/** A recorded event, its destination registered with one slot, the slot taken and the delivery's key claimed. */
async function claimedDelivery(destination: string, eventId: string) {
  const { pool, producer } = harness;
  expect(await producer.send({ eventId, type: 'thing.created' })).toBe('accepted');
  await pool.query(
    destinationStates.registerDestinations([{ name: destination, url: 'https://x.example/h' }]),
  );
  await pool.query(destinationSlots.registerSlots(destination, 1));
  const slot = await one<{ slot: number; token: string }>(destinationSlots.takeSlot(destination, 1, 60_000));
  const effect = `destination.${destination}`;
  const ref = {
    provider: 'test',
    eventId,
    effect,
    idempotencyKey: eventIdempotencyKey('test', eventId, effect),
  };
  const claim = await one<idempotencyKeys.KeyClaimRow>(idempotencyKeys.claimKey(ref, 60_000));
  const end: deliveries.DeliveryEnd = {
    destination,
    ref,
    fence: { keyAttempts: claim!.key_attempts!, token: claim!.claim_token! },
    slot: slot!,
    attempt: {
      provider: 'test',
      eventId,
      effect,
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
  return end;
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

describe('a delivery in two statements', () => {
  it('starts with the gate and the event, or says which is missing', async () => {
    await claimedDelivery('start-api', 'evt_start');
    const start = await one<deliveries.DeliveryStart>(
      deliveries.startDelivery(
        { name: 'start-api', probeAfterMs: 1_000 },
        { provider: 'test', eventId: 'evt_start' },
      ),
    );
    expect(start).toMatchObject({ state: 'active', probe: false, type: 'thing.created' });
    const stored = await one<{ payload: string }>(webhookEvents.selectEvent('test', 'evt_start'));
    expect(start!.payload).toBe(stored!.payload);
    expect(start!.payload).not.toBeNull();

    const gone = await one<deliveries.DeliveryStart>(
      deliveries.startDelivery(
        { name: 'start-api', probeAfterMs: 1_000 },
        { provider: 'test', eventId: 'evt_none' },
      ),
    );
    expect(gone).toMatchObject({ state: 'active', type: null, payload: null });
    const unregistered = await one<deliveries.DeliveryStart>(
      deliveries.startDelivery(
        { name: 'no-such-api', probeAfterMs: 1_000 },
        { provider: 'test', eventId: 'evt_start' },
      ),
    );
    expect(unregistered).toMatchObject({ state: null, probe: false, type: 'thing.created' });
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
});
