import { createHash } from 'node:crypto';
import type { EventSource } from '@webhook-inbox/db';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { InvalidPayloadError, UnavailableError, WebhookError } from './errors.ts';
import type { VerifiedEvent } from './providers/types.ts';
import { EVENTS_QUEUE, type EventJob } from './queue.ts';

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

// The whole point of the system: a redelivery finds the row and inserts nothing, so it also enqueues nothing.
// Named: parsed and planned once per connection, not on every event.
const INSERT_EVENT = {
  name: 'webhook_inbox_insert_event',
  text: `
  insert into webhook_events (provider, event_id, type, payload, headers, source)
  values ($1, $2, $3, $4::jsonb, $5::jsonb, $6)
  on conflict (provider, event_id) do nothing
  returning event_id`,
};

// Postgres refuses some JSON that JavaScript accepts (a \u0000 escape, a lone surrogate): the body is
// authentic but cannot be stored, so it is the sender's payload that is wrong, not our database.
const UNSTORABLE_JSON = new Set(['22P05', '22P02', '22021']);

// pg-boss builds one job-insert statement per queue (a large one); naming it by its text lets Postgres keep its
// plan per connection instead of parsing and planning it for every event.
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `webhook_inbox_job_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * Records an authentic event and enqueues its job in ONE transaction: both or neither. Returns `accepted` when
 * this call created the row, `duplicate` when the event was already recorded (by a committed transaction: a
 * concurrent insert of the same key is waited for). Any failure before the commit throws `UnavailableError`
 * (the sender retries) with nothing recorded.
 *
 * Round trips, one pool checkout: a new event takes three on a pipelined pool (begin + insert sent together,
 * the job insert, commit) and four otherwise; a duplicate takes one on a pipelined pool (begin + insert; its
 * empty transaction is ended behind the answer) and three otherwise.
 */
export async function ingest(
  { pool, boss }: IngestDeps,
  event: VerifiedEvent,
  source: EventSource = 'webhook',
): Promise<IngestOutcome> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new UnavailableError('cannot reach the database to record the event', { cause: error });
  }

  let discard = false;
  // A checked-out client has no 'error' listener of the pool's: a connection dropped between two of our queries
  // would otherwise be an uncaught exception. The next query fails anyway; just make sure it is not reused.
  const onConnectionError = () => {
    discard = true;
  };
  client.on('error', onConnectionError);
  const pipelined = client.pipeline;
  let open = false;
  try {
    const values = [
      event.provider,
      event.eventId,
      event.type,
      event.payloadText,
      JSON.stringify(event.headers),
      source,
    ];
    let inserted: pg.QueryResult;
    if (pipelined) {
      const begun = client.query('begin');
      open = true;
      const insert = client.query({ ...INSERT_EVENT, values });
      // Both are on the wire before either answer; if `begin` failed, the insert fails too.
      [, inserted] = await Promise.all([begun, insert]);
    } else {
      await client.query('begin');
      open = true;
      inserted = await client.query({ ...INSERT_EVENT, values });
    }

    if (inserted.rowCount !== 1) {
      // Nothing was written: ending the empty transaction cannot change the answer, so with a pipeline it goes
      // out behind us (the connection's next user queues after it) instead of costing a round trip.
      const end = client.query('commit');
      open = false;
      if (pipelined) end.catch(() => {});
      else await end;
      return 'duplicate';
    }

    const job: EventJob = { provider: event.provider, eventId: event.eventId };
    const jobId = await boss.send(EVENTS_QUEUE, job, {
      db: {
        executeSql: (text: string, params?: unknown[]) =>
          client.query({ name: statementName(text), text, values: params }),
      },
    });
    // pg-boss skips an insert its queue policy forbids (and returns null): never commit an event without its job.
    if (jobId === null) throw new Error(`pg-boss did not create the job (queue "${EVENTS_QUEUE}" policy?)`);
    await client.query('commit');
    open = false;
    return 'accepted';
  } catch (error) {
    const code = error instanceof pg.DatabaseError ? error.code : undefined;
    if (code !== undefined && UNSTORABLE_JSON.has(code)) {
      // The sender's payload, not the connection: roll back and keep it.
      await client.query('rollback').catch(() => {
        discard = true;
      });
      open = false;
      throw new InvalidPayloadError('the body is JSON that PostgreSQL cannot store (e.g. a \\u0000 escape)', {
        cause: error,
      });
    }
    // Anything else (a reset, a timeout, a half-sent pipeline, a statement the server refused): discard the
    // connection, which also ends its transaction on the server, rather than wait on a rollback that may never
    // be answered or keep a session in an unknown state.
    discard = true;
    if (error instanceof WebhookError) throw error;
    throw new UnavailableError('the event could not be recorded', { cause: error });
  } finally {
    client.off('error', onConnectionError);
    client.release(discard || open);
  }
}
