import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  claimExternalEffects,
  completeExternalEffect,
  holdClaim,
  releaseClaim,
  type ExternalClaimRow,
} from '../../src/sql/idempotency-keys.ts';
import {
  LEDGER_LACKS_EFFECTS,
  settleEvents,
  type SettleRow,
  startAttempts,
  type LoadedEventRow,
  type SettledRow,
} from '../../src/sql/ledger.ts';

const db = useTestDatabase();
let pool: pg.Pool;

const RACERS = 8;

beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: RACERS });
});
afterAll(() => pool?.end());

async function statusOf(eventId: string): Promise<{ status: string; attempts: number }> {
  const { rows } = await pool.query<{ status: string; attempts: number }>(
    `select status, attempts from webhook_events where provider = 'stripe' and event_id = $1`,
    [eventId],
  );
  return rows[0]!;
}

it('starting an attempt makes an event processing, but a late attempt leaves a processed event processed', async () => {
  for (const [eventId, status] of [
    ['evt_ledger_processed', 'processed'],
    ['evt_ledger_failed', 'failed'],
    ['evt_ledger_received', 'received'],
  ] as const) {
    await pool.query(
      `with event as (
         insert into webhook_events (provider, event_id, type, headers, source, status, attempts)
         values ('stripe', $1, 'checkout.session.completed', '{}'::jsonb, 'webhook', $2, 1)
         returning provider, event_id, received_at)
       insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select provider, event_id, received_at, jsonb_build_object('id', event_id) from event`,
      [eventId, status],
    );
  }
  const keys = ['evt_ledger_processed', 'evt_ledger_failed', 'evt_ledger_received'].map((eventId) => ({
    provider: 'stripe',
    eventId,
  }));
  const { rows } = await pool.query<{ event_id: string; payload: string }>(startAttempts(keys));
  // Each with its payload, read from the partition of its day.
  expect(rows.map((row) => [row.event_id, row.payload]).sort()).toEqual([
    ['evt_ledger_failed', '{"id": "evt_ledger_failed"}'],
    ['evt_ledger_processed', '{"id": "evt_ledger_processed"}'],
    ['evt_ledger_received', '{"id": "evt_ledger_received"}'],
  ]);

  // A late attempt of a job another worker already completed: it must not leave the event `processing` for good.
  expect(await statusOf('evt_ledger_processed')).toEqual({ status: 'processed', attempts: 2 });
  expect(await statusOf('evt_ledger_failed')).toEqual({ status: 'processing', attempts: 2 });
  expect(await statusOf('evt_ledger_received')).toEqual({ status: 'processing', attempts: 2 });
});

it('an attempt of a row that was lost never settles the row recorded again under its key', async () => {
  // A failover to a replica that had not received the event loses its row; the provider's redelivery records it
  // again. The worker still holding the lost row's attempt must leave the new row to its own job.
  const key = { provider: 'stripe', eventId: 'evt_ledger_lost' };
  const record = (at: string) =>
    pool.query(
      `insert into webhook_events (provider, event_id, type, headers, source, received_at)
       values ('stripe', $1, 'customer.created', '{}'::jsonb, 'webhook', $2)`,
      [key.eventId, at],
    );
  await record('2026-12-05T10:00:00.123456Z');
  const [started] = (await pool.query<LoadedEventRow>(startAttempts([key]))).rows;
  await pool.query(`delete from webhook_events where provider = 'stripe' and event_id = $1`, [key.eventId]);
  await record('2026-12-05T10:00:07.5Z');

  const late = {
    ...key,
    receivedAt: started!.received_at,
    attempt: started!.attempts,
    status: 'processed' as const,
    lastError: null,
  };
  expect((await pool.query(settleEvents([late]))).rows).toEqual([]);
  expect(await statusOf(key.eventId)).toEqual({ status: 'received', attempts: 0 });

  // The attempt of the row itself settles it, although a Date keeps only the milliseconds of its time.
  const [current] = (await pool.query<LoadedEventRow>(startAttempts([key]))).rows;
  const own = { ...late, receivedAt: current!.received_at, attempt: current!.attempts };
  expect((await pool.query(settleEvents([own]))).rows).toHaveLength(1);
  expect(await statusOf(key.eventId)).toEqual({ status: 'processed', attempts: 1 });
});

it('settles processed only where the ledger holds every effect completed; else failed, naming the others', async () => {
  // The runner's view (its effects committed) against the ledger's: a failover can lose commits between the two.
  const key = { provider: 'stripe', eventId: 'evt_ledger_lacks' };
  await recordForGroups(key.eventId);
  const complete = (effect: string) =>
    pool.query(
      `insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key)
       values ('stripe', $1, $2, 'completed', 1, $2)`,
      [key.eventId, effect],
    );
  await complete('a');
  const [started] = (await pool.query<LoadedEventRow>(startAttempts([key]))).rows;
  // The group's attempt too: its first, as the default group's is (each settlement is fenced to its attempt).
  await pool.query(startAttempts([key], 'g'));
  const processed = {
    ...key,
    receivedAt: started!.received_at,
    attempt: started!.attempts,
    status: 'processed' as const,
    lastError: null,
    effects: ['a', 'c', 'b'],
  };
  for (const group of ['default', 'g']) {
    const refused = (await pool.query<SettledRow>(settleEvents([processed], group))).rows;
    expect(refused.map((row) => row.status)).toEqual(['failed']);
    expect(refused[0]!.last_error).toMatch(`${LEDGER_LACKS_EFFECTS}: b, c (`);
  }
  await complete('b');
  await complete('c');
  for (const group of ['default', 'g']) {
    const settled = (await pool.query<SettledRow>(settleEvents([processed], group))).rows;
    expect(settled).toMatchObject([{ status: 'processed', last_error: null }]);
  }
});

it('an attempt whose start the database lost settles nothing and is answered start_lost, in either group', async () => {
  // A failover can keep pg-boss's fetch of a job (committed first) and lose the attempt's start: the promoted
  // replica's row counts fewer attempts than the attempt settling it. Its job must run again, not complete.
  const key = { provider: 'stripe', eventId: 'evt_ledger_start_lost' };
  await recordForGroups(key.eventId);
  for (const group of ['default', 'g']) {
    const [started] = (await pool.query<LoadedEventRow>(startAttempts([key], group))).rows;
    const table = group === 'default' ? 'webhook_events' : 'webhook_event_groups';
    // What the promoted replica has: the row as it was before the attempt started.
    await pool.query(`update ${table} set status = 'received', attempts = 0 where event_id = $1`, [
      key.eventId,
    ]);
    const settlement = {
      ...key,
      receivedAt: started!.received_at,
      attempt: started!.attempts,
      status: 'processed' as const,
      lastError: null,
      effects: [],
    };
    const answered = (await pool.query<SettleRow>(settleEvents([settlement], group))).rows;
    expect(answered).toMatchObject([
      { event_id: key.eventId, status: 'received', attempts: 0, start_lost: true },
    ]);
    const { rows } = await pool.query(`select status, attempts from ${table} where event_id = $1`, [
      key.eventId,
    ]);
    expect(rows).toEqual([{ status: 'received', attempts: 0 }]);
  }
  // A settled row is not the attempt's to retry: a processed event whose count is behind is answered nothing.
  await pool.query(`update webhook_events set status = 'processed', attempts = 0 where event_id = $1`, [
    key.eventId,
  ]);
  const late = {
    ...key,
    receivedAt: (await pool.query<LoadedEventRow>(startAttempts([key]))).rows[0]!.received_at,
    attempt: 5,
    status: 'failed' as const,
    lastError: 'x',
  };
  expect((await pool.query(settleEvents([late]))).rows).toEqual([]);
});

/** A received event, delivered to the default group and to group `g`. */
async function recordForGroups(eventId: string): Promise<void> {
  await pool.query(
    `insert into webhook_events (provider, event_id, type, headers, source) values ('stripe', $1, 'x', '{}', 'webhook')`,
    [eventId],
  );
  await pool.query(
    `insert into webhook_event_groups (provider, event_id, consumer_group) values ('stripe', $1, 'g')`,
    [eventId],
  );
}

async function recordEvents(eventIds: readonly string[]): Promise<void> {
  await pool.query(
    `insert into webhook_events (provider, event_id, type, headers, source, status, attempts)
     select 'stripe', id, 'customer.created', '{}'::jsonb, 'webhook', 'processing', 1
       from unnest($1::text[]) as id`,
    [eventIds],
  );
}

it('claims an external effect key for one attempt only, however many race for it on other connections', async () => {
  // Events of one account race for its welcome email's key, each claim on its own connection, all at once. A
  // claimant that commits while another's statement runs is invisible to that statement's snapshot: the claim
  // must still see it. Rounds go on until such a race has been seen (a held key whose claim it did not see:
  // `held_until` now rather than the lease's end, a minute ahead), and every round must claim exactly once.
  let unseenClaims = 0;
  for (let round = 0; unseenClaims === 0; round++) {
    expect(round, 'a claim committed during another claim within 300 rounds').toBeLessThan(300);
    const key = `welcome:account:acct_race_${round}`;
    const eventIds = Array.from({ length: RACERS }, (_, i) => `evt_race_${round}_${i}`);
    await recordEvents(eventIds);
    const claims = await Promise.all(
      eventIds.map(async (eventId) => {
        const { rows } = await pool.query<ExternalClaimRow>(
          claimExternalEffects([
            { provider: 'stripe', eventId, effect: 'welcome', idempotencyKey: key, leaseMs: 60_000 },
          ]),
        );
        return { eventId, claim: rows[0]! };
      }),
    );
    const winners = claims.filter(({ claim }) => claim.key_attempts !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.claim).toMatchObject({ key_attempts: 1, run_claimed: true, held_until: null });
    const losers = claims.filter(({ claim }) => claim.key_attempts === null);
    for (const { claim } of losers) {
      expect(claim.run_claimed).toBe(false);
      expect(claim.held_until).toBeInstanceOf(Date);
    }
    unseenClaims += losers.filter(({ claim }) => claim.held_until!.getTime() < Date.now() + 30_000).length;
    // Only the winner's ledger row says running; the others wrote nothing.
    const { rows: running } = await pool.query<{ event_id: string }>(
      `select event_id from effect_runs where event_id = any($1::text[])`,
      [eventIds],
    );
    expect(running.map((row) => row.event_id)).toEqual([winners[0]!.eventId]);
  }
});

it('leaves a key that is completed, or claimed and unexpired, alone; takes over an expired claim', async () => {
  await recordEvents(['evt_lease_1', 'evt_lease_2', 'evt_lease_3', 'evt_lease_4']);
  const ref = (eventId: string, leaseMs: number) => ({
    provider: 'stripe',
    eventId,
    effect: 'welcome',
    idempotencyKey: 'welcome:account:acct_lease',
    leaseMs,
  });
  const claim = async (eventId: string, leaseMs: number) =>
    (await pool.query<ExternalClaimRow>(claimExternalEffects([ref(eventId, leaseMs)]))).rows[0]!;
  const minute = 60_000;
  const fenceOf = (row: ExternalClaimRow) => ({ keyAttempts: row.key_attempts!, token: row.claim_token! });

  // A claim whose lease has run out (its worker died) is taken over, with a warning-worthy prior status.
  expect(await claim('evt_lease_1', -1_000)).toMatchObject({ key_attempts: 1 });
  const claimedAt = Date.now();
  const second = await claim('evt_lease_2', minute);
  expect(second).toMatchObject({
    key_attempts: 2,
    prior_status: 'claimed',
    run_claimed: true,
    held_until: null,
  });
  // Held until its lease ends, a minute from the claim by the database's clock: the next claimant is told when.
  const held = await claim('evt_lease_3', minute);
  expect(held).toMatchObject({ key_attempts: null, run_claimed: false });
  expect(Math.abs(held.held_until!.getTime() - (claimedAt + minute))).toBeLessThan(5_000);
  // A released claim (`releaseClaim`: its attempt could not land its mark) does not hold the key.
  await pool.query(releaseClaim(ref('evt_lease_2', minute), fenceOf(second)));
  const third = await claim('evt_lease_3', minute);
  expect(third).toMatchObject({ key_attempts: 3, prior_status: 'claimed' });
  // Completed: the next event's effect is completed under the key without running.
  await pool.query(completeExternalEffect(ref('evt_lease_3', minute), fenceOf(third)));
  expect(await claim('evt_lease_4', minute)).toMatchObject({
    key_attempts: null,
    prior_status: 'completed',
    run_claimed: true,
    held_until: null,
  });
  const { rows } = await pool.query(
    `select event_id, status, attempts from effect_runs where event_id like 'evt_lease_%' order by event_id`,
  );
  expect(rows).toEqual([
    { event_id: 'evt_lease_1', status: 'running', attempts: 1 },
    { event_id: 'evt_lease_2', status: 'running', attempts: 1 },
    { event_id: 'evt_lease_3', status: 'completed', attempts: 1 },
    { event_id: 'evt_lease_4', status: 'completed', attempts: 0 },
  ]);
});

it("renews a claim's lease for its own claim only (number and token), and never shortens it", async () => {
  await recordEvents(['evt_renew_1']);
  const ref = {
    provider: 'stripe',
    eventId: 'evt_renew_1',
    effect: 'welcome',
    idempotencyKey: 'welcome:account:acct_renew',
    leaseMs: 1_000,
  };
  const [claimed] = (await pool.query<ExternalClaimRow>(claimExternalEffects([ref]))).rows;
  const fence = { keyAttempts: 1, token: claimed!.claim_token! };
  const leaseSeconds = async () =>
    Number(
      (
        await pool.query<{ s: string }>(
          `select extract(epoch from claim_expires_at - now())::text as s from idempotency_keys where key = $1`,
          [ref.idempotencyKey],
        )
      ).rows[0]!.s,
    );
  expect(await leaseSeconds()).toBeLessThan(2);
  expect((await pool.query(holdClaim(ref, fence, 60_000))).rowCount).toBe(1);
  expect(await leaseSeconds()).toBeGreaterThan(58);
  // Not another claim's lease (another number, or another token), and never earlier than it was.
  const other = '00000000-0000-4000-8000-000000000000';
  expect((await pool.query(holdClaim(ref, { ...fence, keyAttempts: 2 }, 600_000))).rowCount).toBe(0);
  expect((await pool.query(holdClaim(ref, { ...fence, token: other }, 600_000))).rowCount).toBe(0);
  await pool.query(holdClaim(ref, fence, 1_000));
  expect(await leaseSeconds()).toBeLessThan(61);
  expect(await leaseSeconds()).toBeGreaterThan(58);
});
