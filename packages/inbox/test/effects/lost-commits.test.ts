/**
 * An attempt's database effects commit, and then the database loses those commits while the attempt goes on: a
 * failover to an asynchronous replica that had the event's row (recorded before) but had not received the
 * effects' commits. The attempt's later statements (its external effects' marks, its settle) reach the promoted
 * replica. The event must not end `processed` without its effects: its job is retried and they run again.
 *
 * The loss is made by the event's external effect, which runs after the database effects have committed and
 * before the settle: on its first attempt it deletes what the database effect committed (its ledger row and its
 * product row), as the promotion does.
 */
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { external, type EventOutcome } from '../../src/effects/types.ts';
import { LEDGER_LACKS_EFFECTS } from '../../src/sql/ledger.ts';
import { createInbox } from '../../src/inbox.ts';
import { effectRuns, eventRow, logged, useWorkerHarness } from '../support/harness.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);

it('an event whose effects the database lost before its settle is retried, not processed without them', async () => {
  const { pool, producer } = harness;
  const settled: Array<EventOutcome['status']> = [];
  const retried: Array<{ msg: string; lastError?: string }> = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void retried.push(JSON.parse(line) as { msg: string; lastError?: string }) },
  );
  const inbox = createInbox({ logger, observer: { event: ({ status }) => void settled.push(status) } }).on(
    'test',
    'thing.created',
    {
      record: logged('record'),
      notify: external({
        run: async ({ event, attempt }) => {
          if (attempt > 1) return;
          await pool.query(`delete from effect_log where event_id = $1 and effect = 'record'`, [
            event.eventId,
          ]);
          await pool.query(`delete from effect_runs where event_id = $1 and effect = 'record'`, [
            event.eventId,
          ]);
        },
      }),
    },
  );
  await harness.start(inbox);

  expect(await producer.send({ eventId: 'evt_lost_commit', type: 'thing.created' })).toBe('accepted');
  await waitFor(async () => (await eventRow(pool, 'evt_lost_commit'))?.status === 'processed', {
    timeout: 15_000,
    message: 'evt_lost_commit processed',
  });

  // The first settle found the ledger without `record` and left the event failed, naming it; the retry ran it.
  expect(settled).toEqual(['failed', 'processed']);
  const retries = retried.filter((line) => line.msg === 'event failed; it will be retried');
  expect(retries).toHaveLength(1);
  expect(retries[0]!.lastError).toMatch(`${LEDGER_LACKS_EFFECTS}: record (`);
  expect(await eventRow(pool, 'evt_lost_commit')).toEqual({
    status: 'processed',
    attempts: 2,
    last_error: null,
  });
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from effect_log where event_id = 'evt_lost_commit' and effect = 'record'`,
  );
  expect(rows[0]!.n).toBe(1);
  const runs = await effectRuns(pool, 'evt_lost_commit');
  expect(runs.record).toMatchObject({ status: 'completed', attempts: 1 });
  // The external effect completed on the first attempt and stayed completed: not run again.
  expect(runs.notify).toMatchObject({ status: 'completed', attempts: 1 });
});
