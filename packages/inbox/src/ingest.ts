import { createHash } from 'node:crypto';
import type { EventSource } from '@webhook-inbox/db';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { InvalidPayloadError, UnavailableError, WebhookError } from './errors.ts';
import type { VerifiedEvent } from './providers/types.ts';
import { EVENTS_QUEUE, type EventJob } from './queue.ts';
import { webhookEvents } from './sql/index.ts';
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
 * SQLSTATEs that say this event can never be stored, however often it is sent: the body is authentic but
 * PostgreSQL refuses it, so the answer is a 400 (the sender stops retrying), not a 503. Classified where the
 * insert fails, so a normal event pays nothing for it.
 */
const UNSTORABLE: ReadonlyMap<string, string> = new Map([
  // jsonb refuses a \u0000 escape (and escapes the server encoding cannot represent).
  ['22P05', 'the body has a Unicode escape PostgreSQL cannot store (e.g. \\u0000)'],
  // JSON that JavaScript accepts and jsonb does not (a lone surrogate escape).
  ['22P02', 'the body is JSON that PostgreSQL cannot parse (e.g. a lone surrogate escape)'],
  // A NUL character in a text value (the event id or type).
  ['22021', 'the event id or type holds a character PostgreSQL cannot store (NUL)'],
  // A number too large for jsonb's numeric.
  ['22003', 'the body has a number too large for PostgreSQL'],
  // Stack depth limit exceeded: nesting deeper than the server's parser allows.
  ['54001', 'the body is nested too deeply for PostgreSQL'],
  // Program limit exceeded: an event key too long for the index, a jsonb string or object over its size limit.
  ['54000', 'the event is larger than PostgreSQL can store or index'],
]);

// pg-boss builds one job-insert statement per queue (a large one); naming it by its text lets Postgres keep its
// plan per connection instead of parsing and planning it for every event.
// Bounded: should pg-boss ever vary the text per call, statements stay unnamed instead of piling up.
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 32;
function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `webhook_inbox_job_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

// pg-boss's insert ends in ON CONFLICT DO NOTHING: on a queue whose policy limits jobs (one queued, one
// active, ...) a send can be skipped without an error. Only a standard queue never skips one; the policy cannot
// change after the queue is created, so it is read once per pg-boss instance.
const standardQueue = new WeakMap<PgBoss, Promise<boolean>>();
function neverSkipsInserts(boss: PgBoss): Promise<boolean> {
  let known = standardQueue.get(boss);
  if (!known) {
    known = boss.getQueue(EVENTS_QUEUE).then(
      (queue) => (queue?.policy ?? 'standard') === 'standard',
      () => {
        standardQueue.delete(boss);
        return false;
      },
    );
    standardQueue.set(boss, known);
  }
  return known;
}

/**
 * The connection's socket, to send two pipelined queries in one write (pg writes each query on its own; on a
 * machine where a syscall is expensive, that is a measurable share of a duplicate's cost). Not part of pg's
 * typed API: when it is not there, the queries simply go out in two writes.
 */
function socketOf(client: pg.PoolClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as { connection?: { stream?: { cork?: unknown; uncork?: unknown } } }).connection
    ?.stream;
  return typeof stream?.cork === 'function' && typeof stream.uncork === 'function'
    ? (stream as { cork(): void; uncork(): void })
    : undefined;
}

/**
 * Records an authentic event and enqueues its job in ONE transaction: both or neither. Returns `accepted` when
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
    // Named (prepared once per connection); a duplicate inserts nothing and returns no row.
    const insert = webhookEvents.insertEvent(event, source);
    let inserted: pg.QueryResult;
    if (pipelined) {
      // Both go out in one write, before either answer; if `begin` failed, the insert fails too.
      const stream = socketOf(client);
      stream?.cork();
      const begun = client.query('begin');
      open = true;
      const insertion = client.query(insert);
      stream?.uncork();
      [, inserted] = await Promise.all([begun, insertion]);
    } else {
      await client.query('begin');
      open = true;
      inserted = await client.query(insert);
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

    const job: EventJob = { provider: event.provider, eventId: event.eventId, ...jobTraceContext() };
    // With a pipeline and a queue that never skips an insert, `commit` follows the job insert in the same write:
    // if the insert fails, Postgres answers the commit with a rollback, so both or neither still holds.
    const commitBehindJob = pipelined && (await neverSkipsInserts(boss));
    let committed: Promise<pg.QueryResult> | undefined;
    const jobId = await boss.send(EVENTS_QUEUE, job, {
      db: {
        executeSql: (text: string, params?: unknown[]) => {
          if (!commitBehindJob) return client.query({ name: statementName(text), text, values: params });
          const stream = socketOf(client);
          stream?.cork();
          const inserted = client.query({ name: statementName(text), text, values: params });
          committed = client.query('commit');
          stream?.uncork();
          committed.catch(() => {});
          return inserted;
        },
      },
    });
    if (committed) {
      const result = await committed;
      open = false;
      if (result.command !== 'COMMIT')
        throw new Error(`the transaction ended in ${result.command}, not COMMIT`);
      // Cannot happen on a standard queue (checked once per pg-boss instance); say so loudly if it ever does.
      if (jobId === null) throw new Error(`pg-boss skipped the job of an event that is now recorded`);
      return 'accepted';
    }
    // pg-boss skips an insert its queue policy forbids (and returns null): never commit an event without its job.
    if (jobId === null) throw new Error(`pg-boss did not create the job (queue "${EVENTS_QUEUE}" policy?)`);
    await client.query('commit');
    open = false;
    return 'accepted';
  } catch (error) {
    const code = error instanceof pg.DatabaseError ? error.code : undefined;
    const unstorable = code === undefined ? undefined : UNSTORABLE.get(code);
    if (unstorable !== undefined) {
      // The sender's payload, not the connection: roll back and keep it.
      await client.query('rollback').catch(() => {
        discard = true;
      });
      open = false;
      throw new InvalidPayloadError(`${unstorable} (SQLSTATE ${code})`, { cause: error });
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
