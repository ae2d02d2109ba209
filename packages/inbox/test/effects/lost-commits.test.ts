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
import { ATTEMPT_START_LOST, LEDGER_LACKS_EFFECTS } from '../../src/sql/ledger.ts';
import { createInbox } from '../../src/inbox.ts';
import { effectRuns, eventRow, logged, useWorkerHarness } from '../support/harness.ts';

const db = useTestDatabase();
const harness = useWorkerHarness(() => db.url);

/** A logger at `warn` that keeps its lines, and the retries it logged. */
function retryLog() {
  const lines: Array<{ msg: string; lastError?: string }> = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; lastError?: string }) },
  );
  const retries = () => lines.filter((line) => line.msg === 'event failed; it will be retried');
  return { logger, retries };
}

/** Sends the event, waits for it processed, and answers how many times `record` ran for it. */
async function processedOnce(eventId: string): Promise<number> {
  const { pool, producer } = harness;
  expect(await producer.send({ eventId, type: 'thing.created' })).toBe('accepted');
  await waitFor(async () => (await eventRow(pool, eventId))?.status === 'processed', {
    timeout: 15_000,
    message: `${eventId} processed`,
  });
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from effect_log where event_id = $1 and effect = 'record'`,
    [eventId],
  );
  return rows[0]!.n;
}

it('an event whose effects the database lost before its settle is retried, not processed without them', async () => {
  const { pool } = harness;
  const settled: Array<EventOutcome['status']> = [];
  const { logger, retries } = retryLog();
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

  expect(await processedOnce('evt_lost_commit')).toBe(1);

  // The first settle found the ledger without `record` and left the event failed, naming it; the retry ran it.
  expect(settled).toEqual(['failed', 'processed']);
  expect(retries()).toHaveLength(1);
  expect(retries()[0]!.lastError).toMatch(`${LEDGER_LACKS_EFFECTS}: record (`);
  expect(await eventRow(pool, 'evt_lost_commit')).toEqual({
    status: 'processed',
    attempts: 2,
    last_error: null,
  });
  const runs = await effectRuns(pool, 'evt_lost_commit');
  expect(runs.record).toMatchObject({ status: 'completed', attempts: 1 });
  // The external effect completed on the first attempt and stayed completed: not run again.
  expect(runs.notify).toMatchObject({ status: 'completed', attempts: 1 });
});

it('an attempt whose start the database lost is retried, not completed with its event left unprocessed', async () => {
  // pg-boss's fetch of the job committed and reached the replica; the attempt's start (and all after it) did not.
  // Completing the job would leave the event `received` with no job for good.
  const { pool } = harness;
  const { logger, retries } = retryLog();
  const settled: Array<Pick<EventOutcome, 'status' | 'eventId'>> = [];
  let lost = false;
  const inbox = createInbox({
    logger,
    observer: { event: ({ status, eventId }) => void settled.push({ status, eventId }) },
  }).on('test', 'thing.created', {
    record: logged('record'),
    notify: external({
      run: async ({ event }) => {
        // Once: the retry starts at the same attempt number again, as it would on the promoted replica.
        if (lost) return;
        lost = true;
        await pool.query(`delete from effect_log where event_id = $1`, [event.eventId]);
        await pool.query(`delete from effect_runs where event_id = $1`, [event.eventId]);
        await pool.query(`update webhook_events set status = 'received', attempts = 0 where event_id = $1`, [
          event.eventId,
        ]);
      },
    }),
  });
  await harness.start(inbox);

  expect(await processedOnce('evt_lost_start')).toBe(1);
  expect(retries().map((line) => line.lastError)).toEqual([ATTEMPT_START_LOST]);
  // The observer (and so the worker's metrics) sees the lost attempt as the failure it became.
  expect(settled).toEqual([
    { status: 'failed', eventId: 'evt_lost_start' },
    { status: 'processed', eventId: 'evt_lost_start' },
  ]);
  expect(await eventRow(pool, 'evt_lost_start')).toEqual({
    status: 'processed',
    attempts: 1,
    last_error: null,
  });
});
