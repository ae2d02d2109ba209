import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpired } from '../src/retention.ts';
import * as replayOperations from '../src/sql/replay-operations.ts';

// A bulk replay's outcome counts (migration 0013) against its replayed events' statuses read now: recorded while
// workers change those statuses, for the default group and another, and after retention purges some.

const EVENTS = 150;
const db = useTestDatabase();
let pool: pg.Pool;
beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: 8 });
});
afterAll(async () => pool.end());

const ids = Array.from({ length: EVENTS }, (_, i) => `evt_outcome_${String(i).padStart(4, '0')}`);

/** What each operation's replayed events are now, read from the events themselves. */
async function truth(): Promise<replayOperations.OutcomeRow[]> {
  const { rows } = await pool.query<replayOperations.OutcomeRow>(
    `select operation_id::int as id, count(*) filter (where status = 'processed')::int as processed,
            count(*) filter (where status in ('received', 'processing', 'failed'))::int as failing,
            count(*) filter (where status = 'dead')::int as dead, count(*) filter (where status is null)::int as gone
       from (select x.operation_id,
                    case when coalesce(o.filter->>'group', '') in ('', 'default') then e.status else g.status end
                      as status
               from replay_operation_events x
               join replay_operations o on o.id = x.operation_id
               left join webhook_events e on e.provider = x.provider and e.event_id = x.event_id
               left join webhook_event_groups g
                 on g.provider = x.provider and g.event_id = x.event_id and g.consumer_group = o.filter->>'group') s
      group by operation_id order by operation_id`,
  );
  return rows;
}

async function outcomes(ids: number[]): Promise<replayOperations.OutcomeRow[]> {
  const { rows } = await pool.query<replayOperations.OutcomeRow>(replayOperations.selectOutcomes(ids));
  return rows.sort((a, b) => a.id - b.id);
}

/** A status each event goes through after its replay, by its number: processed, dead again, still failing. */
const finalStatus = (i: number) => (['processed', 'dead', 'failed'] as const)[i % 3];

describe('bulk replay outcomes', () => {
  it('count what the replayed events are now, recorded while their statuses change, in either group', async () => {
    await pool.query(
      `insert into webhook_events (provider, event_id, type, status, received_at)
       select 'stripe', id, 'invoice.paid', 'dead', now() - interval '100 days' from unnest($1::text[]) as id`,
      [ids],
    );
    await pool.query(
      `insert into webhook_event_groups (provider, event_id, consumer_group, status)
       select 'stripe', id, 'billing', 'dead' from unnest($1::text[]) as id`,
      [ids],
    );
    const operation = async (filter: object) =>
      (await pool.query<{ id: number }>(replayOperations.insertOperation(filter, new Date(), EVENTS, 'test')))
        .rows[0]!.id;
    const byDefault = Number(await operation({ status: 'dead' }));
    const byBilling = Number(await operation({ status: 'dead', group: 'billing' }));

    // The runner records each event as the workers move it: received, then its final status, on other
    // connections at the same time.
    const record = (id: number, group: string) =>
      Promise.all(
        [0, 1].map(async (half) => {
          for (let i = half; i < EVENTS; i += 2) {
            await pool.query(
              replayOperations.recordReplayed(id, { provider: 'stripe', eventId: ids[i]! }, group),
            );
          }
        }),
      );
    const work = (table: 'webhook_events' | 'webhook_event_groups') =>
      Promise.all(
        [0, 1, 2].map(async (third) => {
          for (let i = third; i < EVENTS; i += 3) {
            await pool.query(`update ${table} set status = 'received' where event_id = $1`, [ids[i]]);
            await pool.query(`update ${table} set status = $2 where event_id = $1`, [ids[i], finalStatus(i)]);
          }
        }),
      );
    await Promise.all([record(byDefault, 'default'), work('webhook_events')]);
    await Promise.all([record(byBilling, 'billing'), work('webhook_event_groups')]);
    const expected = [
      { id: byDefault, processed: 50, failing: 50, dead: 50, gone: 0 },
      { id: byBilling, processed: 50, failing: 50, dead: 50, gone: 0 },
    ];
    expect(await truth()).toEqual(expected);
    expect(await outcomes([byDefault, byBilling])).toEqual(expected);

    // Retention deletes the finished events (processed or dead in the default group), older than 90 days: gone
    // for both operations.
    expect(await purgeExpired(pool, { keyDays: 90 })).toMatchObject({ keysDeleted: 100 });
    const purged = [
      { id: byDefault, processed: 0, failing: 50, dead: 0, gone: 100 },
      { id: byBilling, processed: 0, failing: 50, dead: 0, gone: 100 },
    ];
    expect(await truth()).toEqual(purged);
    expect(await outcomes([byDefault, byBilling])).toEqual(purged);

    const failing = await pool.query<{ eventId: string; status: string }>(
      replayOperations.selectOutcomeEvents(byBilling, 'failing', 5),
    );
    expect(failing.rows).toEqual(
      [2, 5, 8, 11, 14].map((i) => ({ provider: 'stripe', eventId: ids[i], status: 'failed' })),
    );
  });
});
