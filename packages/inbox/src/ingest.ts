import type { EventSource } from '@webhook-inbox/db';
import { keyOf } from './event-key.ts';
import type { VerifiedEvent } from '@webhook-inbox/providers';
import { recordBatch, type IngestDeps, type IngestOutcome } from './recording.ts';
import { jobTraceContext } from './telemetry.ts';

export type { IngestDeps, IngestOutcome };

/**
 * Records an authentic event and enqueues its job in ONE transaction: both or neither. The group commit's
 * transaction for a batch of one (`recordBatch`), for a caller that records one event at a time. The job goes to
 * the default group's queue, and to the queue of every other consumer group with an effect for the event's type
 * (which also gets the event's `webhook_event_groups` row, in the same insert statement). Returns `accepted` when
 * this call created the row, `duplicate` when the event was already recorded (by a committed transaction: a
 * concurrent insert of the same key is waited for). A payload PostgreSQL refuses throws `InvalidPayloadError`;
 * any other failure before the commit throws `UnavailableError` (the sender retries) with nothing recorded.
 *
 * Round trips, one pool checkout: a new event takes two on a pipelined pool (begin + insert in one write; the
 * job insert + commit in another) and four otherwise (begin, insert, job insert, commit); a duplicate takes one
 * on a pipelined pool (begin + insert; its empty transaction is ended behind the answer) and three otherwise.
 */
export async function ingest(
  deps: IngestDeps,
  event: VerifiedEvent,
  source: EventSource = 'webhook',
): Promise<IngestOutcome> {
  const key = keyOf(event.provider, event.eventId);
  const created = await recordBatch(deps, [{ key, event, source, trace: jobTraceContext() }]);
  return created.has(key) ? 'accepted' : 'duplicate';
}
