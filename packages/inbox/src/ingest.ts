import type { EventSource } from '@webhook-inbox/db';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { VerifiedEvent } from './providers/types.ts';
import type { EventJob } from './queue.ts';
import {
  beginWith,
  endEmpty,
  insertJobsAndCommit,
  jobBatchesFor,
  onRecordingConnection,
} from './recording.ts';
import { webhookEvents } from './sql/index.ts';
import type { CreatedEventRow } from './sql/webhook-events.ts';
import { jobTraceContext } from './telemetry.ts';

export type IngestOutcome = 'accepted' | 'duplicate';

export interface IngestDeps {
  /**
   * Where the transaction runs. A pool created with `pipeline: true` (pg's pipeline mode, as the receiver's is)
   * saves round trips; any pool works.
   */
  pool: pg.Pool;
  /** A started pg-boss instance; `send` runs on our transaction's connection, not on boss's own pool. */
  boss: PgBoss;
}

/**
 * Records an authentic event and enqueues its job in ONE transaction: both or neither. The job goes to the default
 * group's queue, and to the queue of every other consumer group with an effect for the event's type (which also
 * gets the event's `webhook_event_groups` row, in the same insert statement). Returns `accepted` when
 * this call created the row, `duplicate` when the event was already recorded (by a committed transaction: a
 * concurrent insert of the same key is waited for). Any failure before the commit throws `UnavailableError`
 * (the sender retries) with nothing recorded.
 *
 * Round trips, one pool checkout: a new event takes two on a pipelined pool (begin + insert in one write; the
 * job insert + commit in another) and four otherwise (begin, insert, job insert, commit); a duplicate takes one
 * on a pipelined pool (begin + insert; its empty transaction is ended behind the answer) and three otherwise.
 */
export async function ingest(
  { pool, boss }: IngestDeps,
  event: VerifiedEvent,
  source: EventSource = 'webhook',
): Promise<IngestOutcome> {
  return onRecordingConnection(pool, async (transaction) => {
    // Named (prepared once per connection); a duplicate inserts nothing and returns no row.
    const inserted = await beginWith<CreatedEventRow>(transaction, webhookEvents.insertEvent(event, source));
    if (inserted.rows.length !== 1) {
      await endEmpty(transaction);
      return 'duplicate';
    }
    const trace = jobTraceContext();
    await insertJobsAndCommit(
      transaction,
      boss,
      jobBatchesFor(inserted.rows, (): EventJob => ({
        provider: event.provider,
        eventId: event.eventId,
        ...trace,
      })),
    );
    return 'accepted';
  });
}
