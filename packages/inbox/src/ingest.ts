import type { EventSource } from '@webhook-inbox/db';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { InvalidPayloadError, UnavailableError, WebhookError } from './errors.ts';
import type { VerifiedEvent } from './providers/types.ts';
import { EVENTS_QUEUE, type EventJob } from './queue.ts';

export type IngestOutcome = 'accepted' | 'duplicate';

export interface IngestDeps {
  pool: pg.Pool;
  /** A started pg-boss instance; `send` runs on our transaction's connection, not on boss's own pool. */
  boss: PgBoss;
}

// The whole point of the system: a redelivery finds the row and inserts nothing, so it also enqueues nothing.
const INSERT_EVENT = `
  insert into webhook_events (provider, event_id, type, payload, headers, source)
  values ($1, $2, $3, $4::jsonb, $5::jsonb, $6)
  on conflict (provider, event_id) do nothing
  returning event_id`;

// Postgres refuses some JSON that JavaScript accepts (a \u0000 escape, a lone surrogate): the body is
// authentic but cannot be stored, so it is the sender's payload that is wrong, not our database.
const UNSTORABLE_JSON = new Set(['22P05', '22P02', '22021']);

/**
 * Records an authentic event and enqueues its job in ONE transaction: both or neither. Returns `accepted` when
 * this call created the row, `duplicate` when the event was already recorded. Any failure before the commit
 * throws `UnavailableError` (the sender retries) with nothing recorded.
 *
 * Cost: one pool checkout and four round trips for a new event (begin, insert, job insert, commit), three for
 * a duplicate (begin, insert finding the row, commit).
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
  try {
    await client.query('begin');
    const inserted = await client.query(INSERT_EVENT, [
      event.provider,
      event.eventId,
      event.type,
      event.payloadText,
      JSON.stringify(event.headers),
      source,
    ]);
    const created = inserted.rowCount === 1;
    if (created) {
      const job: EventJob = { provider: event.provider, eventId: event.eventId };
      await boss.send(EVENTS_QUEUE, job, {
        db: { executeSql: (text: string, values?: unknown[]) => client.query(text, values) },
      });
    }
    await client.query('commit');
    return created ? 'accepted' : 'duplicate';
  } catch (error) {
    // The server answered with an error: the connection is fine, roll back and keep it. Anything else (a reset,
    // a timeout, a half-sent query) leaves it in an unknown state: discard it, which also ends the transaction
    // on the server, and do not wait on a rollback that may never be answered.
    if (error instanceof pg.DatabaseError) {
      await client.query('rollback').catch(() => {
        discard = true;
      });
    } else {
      discard = true;
    }
    if (error instanceof WebhookError) throw error;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && UNSTORABLE_JSON.has(code)) {
      throw new InvalidPayloadError('the body is JSON that PostgreSQL cannot store (e.g. a \\u0000 escape)', {
        cause: error,
      });
    }
    throw new UnavailableError('the event could not be recorded', { cause: error });
  } finally {
    client.off('error', onConnectionError);
    client.release(discard);
  }
}
