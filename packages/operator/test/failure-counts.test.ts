import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectRuns, ledger } from '@webhook-inbox/inbox/sql';
import { foldFailureCounts } from '../src/failure-counts.ts';
import { purgeExpired } from '../src/retention.ts';
import { countsSql } from '../src/sql/failure-counts.ts';

// The failure groups' counts (migration 0013) against the ledger they count: after concurrent failures of one
// group, retries, completions, deaths, replays, folds and a retention purge, every key's count is the ledger's.

const CLIENTS = 6;
const EVENTS = 240;
const db = useTestDatabase();
let pool: pg.Pool;
beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: CLIENTS + 2 });
});
afterAll(async () => pool.end());

const ids = Array.from({ length: EVENTS }, (_, i) => `evt_count_${String(i).padStart(4, '0')}`);
/** The events' `received_at`: a hundred days ago. */
const RECEIVED_AT = new Date(Date.now() - 100 * 86_400_000);
/** A ref fenced to the events' state: never started (attempt 0), as recorded. */
const ref = (eventId: string) => ({
  provider: 'stripe',
  eventId,
  effect: 'syncCrm',
  idempotencyKey: `stripe:${eventId}:syncCrm`,
  scoped: false,
  attempt: 0,
  receivedAt: RECEIVED_AT,
});

/** The ledger's failing rows per key, and the counts' answer, each sorted the same way. */
async function truthAndCounts(): Promise<[string[], string[]]> {
  const key = 'provider, event_type, effect, fingerprint, event_state';
  const read = async (sql: string) =>
    (await pool.query<Record<string, unknown>>(`select * from (${sql}) c order by ${key}`)).rows.map((r) =>
      JSON.stringify(r),
    );
  return [
    await read(`select ${key}, count(*)::int as n from effect_runs where status = 'failed' group by ${key}`),
    await read(countsSql()),
  ];
}

/** Runs `work` for every event, split over `CLIENTS` connections working at once. */
async function inParallel(work: (client: pg.PoolClient, eventId: string, i: number) => Promise<void>) {
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const client = await pool.connect();
      try {
        for (let i = c; i < EVENTS; i += CLIENTS) await work(client, ids[i]!, i);
      } finally {
        client.release();
      }
    }),
  );
}

describe('failure counts', () => {
  it('equal the ledger through concurrent failures, retries, completions, deaths, replays, folds and a purge', async () => {
    await pool.query(
      `insert into webhook_events (provider, event_id, type, status, received_at)
       select 'stripe', id, 'checkout.session.completed', 'processing', $2
         from unnest($1::text[]) as id`,
      [ids, RECEIVED_AT],
    );

    // Every connection fails its events' effect with one cause, one group, all in transactions open at once: none
    // commits before all have written, so a counter row updated in place would block the second one for good.
    let arrived = 0;
    let release!: () => void;
    const allWritten = new Promise<void>((resolve) => (release = resolve));
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const client = await pool.connect();
        try {
          await client.query('begin');
          for (let i = c; i < EVENTS; i += CLIENTS) {
            await client.query(
              effectRuns.recordDatabaseFailure(
                ref(ids[i]!),
                new Date(),
                `connect ECONNREFUSED 10.0.0.${i}:587`,
              ),
            );
          }
          if (++arrived === CLIENTS) release();
          await allWritten;
          await client.query('commit');
        } finally {
          client.release();
        }
      }),
    );
    let [truth, counts] = await truthAndCounts();
    expect(truth).toHaveLength(1);
    expect(JSON.parse(truth[0]!)).toMatchObject({ n: EVENTS, event_state: 'unfinished' });
    expect(counts).toEqual(truth);

    // Then, at once on every connection while two others fold (one at a time: the other finds the lock taken): a
    // retry failing with another cause, a replay that completes the effect, an event dead after its last attempt,
    // a dead event replayed.
    let folding = true;
    const folders = [0, 1].map(async () => {
      while (folding) await foldFailureCounts(pool, 1);
    });
    await inParallel(async (client, eventId, i) => {
      const key = { provider: 'stripe', eventId };
      switch (i % 4) {
        case 0:
          await client.query(
            effectRuns.recordDatabaseFailure(ref(eventId), new Date(), 'crm timeout after 30 s'),
          );
          break;
        case 1:
          await client.query(effectRuns.claimDatabaseEffects([ref(eventId)]));
          break;
        case 2:
          await client.query(ledger.markDead(key, 'retries exhausted'));
          break;
        default:
          await client.query(ledger.markDead(key, 'retries exhausted'));
          await client.query(`update webhook_events set status = 'received' where event_id = $1`, [eventId]);
      }
    });
    folding = false;
    await Promise.all(folders);
    [truth, counts] = await truthAndCounts();
    expect(
      truth.map((row) => JSON.parse(row) as { fingerprint: string; event_state: string; n: number }),
    ).toEqual([
      expect.objectContaining({
        fingerprint: 'connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>',
        event_state: 'dead',
        n: 60,
      }),
      expect.objectContaining({ event_state: 'unfinished', n: 60 }),
      expect.objectContaining({ fingerprint: 'crm timeout after <n> s', n: 60 }),
    ]);
    expect(counts).toEqual(truth);

    // Retention deletes the dead events (finished, older than the keys' 90 days) and their ledger rows.
    expect(await purgeExpired(pool, { keyDays: 90 })).toMatchObject({ keysDeleted: 60 });
    [truth, counts] = await truthAndCounts();
    expect(truth).toHaveLength(2);
    expect(counts).toEqual(truth);

    // Folded whole: the totals alone are the ledger's counts, no delta left, no key at zero kept.
    await foldFailureCounts(pool);
    [truth, counts] = await truthAndCounts();
    expect(counts).toEqual(truth);
    const left = await pool.query<{ deltas: number; zero: number }>(
      `select (select count(*)::int from failure_count_deltas) as deltas,
              (select count(*)::int from failure_counts where n = 0) as zero`,
    );
    expect(left.rows[0]).toEqual({ deltas: 0, zero: 0 });
  });
});
