import { createHash } from 'node:crypto';
import type { EventSource } from '@webhook-inbox/db/statuses';
import pg from 'pg';
import type { JobInsert, PgBoss } from 'pg-boss';
import { InvalidPayloadError, UnavailableError, WebhookError } from './errors.ts';
import { keyOf } from './event-key.ts';
import { subjectOf } from '@webhook-inbox/providers/subject';
import type { VerifiedEvent } from '@webhook-inbox/providers';
import { EVENTS_QUEUE, queuesOf, type EventJob } from './queue.ts';
import { webhookEvents, type Statement } from './sql/index.ts';
import type { CreatedEventRow } from './sql/webhook-events.ts';
import type { jobTraceContext } from './telemetry.ts';

/**
 * The one way events are recorded: `recordBatch`, one transaction for a batch of events and their jobs. The group
 * commit (`createGroupCommit()`) gathers the batches; `ingest()` is a batch of one. Here too what that transaction
 * does on its connection: check one out and give it back in a known state, classify the errors that are the
 * payload's fault, begin with the insert, send pg-boss's job insert inside the transaction and commit behind it.
 */

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

/** One event of a batch, with its key (`keyOf(provider, eventId)`). */
export interface BatchEntry {
  key: string;
  event: VerifiedEvent;
  source: EventSource;
  /** The request's trace (its ingest span), carried in the job so the worker's span joins it; `{}` when off. */
  trace: ReturnType<typeof jobTraceContext>;
}

/**
 * One transaction for a batch of distinct events, in the order given (callers sort them by key, so two batches
 * that share keys lock them in one order and never deadlock): insert the events, insert the jobs of the rows
 * created, commit. Returns the keys it created (a key absent was already recorded). Throws `InvalidPayloadError`
 * (rolled back, connection kept) when PostgreSQL refused a payload, `UnavailableError` for anything else
 * (connection discarded).
 *
 * Round trips on a pipelined pool: two (begin + insert in one write; the job insert + commit in another), one when
 * every event was a duplicate (its empty transaction is ended behind the answer); four and three on a plain pool.
 */
export async function recordBatch(
  { pool, boss }: IngestDeps,
  entries: readonly BatchEntry[],
): Promise<Set<string>> {
  // Subjects are read before a connection is checked out, so no connection is held while bodies are parsed.
  const rows = entries.map((entry) => ({ ...entry, subject: subjectOf(entry.event) }));
  return onRecordingConnection(pool, async (transaction) => {
    const inserted = await beginWith<CreatedEventRow>(transaction, webhookEvents.insertEvents(rows));
    const created = new Set(inserted.rows.map((row) => keyOf(row.provider, row.event_id)));
    if (created.size === 0) {
      await endEmpty(transaction);
      return created;
    }
    const byKey = new Map(entries.map((entry) => [entry.key, entry]));
    const batches = jobBatchesFor(inserted.rows, (row): EventJob => ({
      provider: row.provider,
      eventId: row.event_id,
      ...byKey.get(keyOf(row.provider, row.event_id))?.trace,
    }));
    await insertJobsAndCommit(transaction, boss, batches);
    return created;
  });
}

/**
 * SQLSTATEs that say an event can never be stored, however often it is sent: the body is authentic but PostgreSQL
 * refuses it, so the answer is a 400 (the sender stops retrying), not a 503. Classified where the insert fails,
 * so a normal event pays nothing for it.
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

/** The `InvalidPayloadError` a failed statement means, when PostgreSQL refused the payload itself. */
function unstorablePayload(error: unknown): InvalidPayloadError | undefined {
  const code = error instanceof pg.DatabaseError ? error.code : undefined;
  const reason = code === undefined ? undefined : UNSTORABLE.get(code);
  return reason === undefined
    ? undefined
    : new InvalidPayloadError(`${reason} (SQLSTATE ${code})`, { cause: error });
}

// pg-boss builds one job-insert statement per queue (a large one); naming it by its text lets Postgres keep its
// plan per connection instead of parsing and planning it for every transaction.
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
// change after the queue is created, so it is read once per pg-boss instance and queue.
const standardQueues = new WeakMap<PgBoss, Map<string, Promise<boolean>>>();
function neverSkipsInserts(boss: PgBoss, queue: string): Promise<boolean> {
  let queues = standardQueues.get(boss);
  if (!queues) standardQueues.set(boss, (queues = new Map<string, Promise<boolean>>()));
  let known = queues.get(queue);
  if (!known) {
    known = boss.getQueue(queue).then(
      (found) => (found?.policy ?? 'standard') === 'standard',
      () => {
        queues.delete(queue);
        return false;
      },
    );
    queues.set(queue, known);
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

/** pg-boss's `db` option for a job insert on `client`, in its open transaction. */
interface JobConnection {
  db: { executeSql(text: string, params?: unknown[]): Promise<pg.QueryResult> };
  /** The `commit` sent behind the last job insert (`commitBehind`), once every insert has been sent. */
  committed(): Promise<pg.QueryResult> | undefined;
}

/**
 * Runs pg-boss's job inserts (`inserts` of them, one per queue) on `client` as named statements. With
 * `commitBehind` (a pipelined connection and queues that never skip an insert), `commit` follows the last insert
 * in the same write: if any insert fails, Postgres answers the commit with a rollback, so the events and their
 * jobs are still committed both or neither.
 */
function jobConnection(client: pg.PoolClient, commitBehind: boolean, inserts: number): JobConnection {
  let committed: Promise<pg.QueryResult> | undefined;
  let sent = 0;
  return {
    db: {
      executeSql: (text: string, params?: unknown[]) => {
        if (!commitBehind || ++sent < inserts)
          return client.query({ name: statementName(text), text, values: params });
        const stream = socketOf(client);
        stream?.cork();
        const inserted = client.query({ name: statementName(text), text, values: params });
        committed = client.query('commit');
        stream?.uncork();
        committed.catch(() => {});
        return inserted;
      },
    },
    committed: () => committed,
  };
}

/** The recording transaction on its connection: `open` is true between its `begin` and its end. */
interface RecordingTransaction {
  client: pg.PoolClient;
  open: boolean;
}

/**
 * Runs `work` on a connection of `pool` and gives the connection back in a known state. A payload PostgreSQL
 * refuses (the sender's fault, not the connection's) is rolled back and rethrown as `InvalidPayloadError`, the
 * connection kept. Anything else (a reset, a timeout, a half-sent pipeline, a statement the server refused)
 * becomes `UnavailableError` (the sender retries) and discards the connection, which also ends its transaction
 * on the server, rather than wait on a rollback that may never be answered or keep a session in an unknown state.
 */
async function onRecordingConnection<T>(
  pool: pg.Pool,
  work: (transaction: RecordingTransaction) => Promise<T>,
): Promise<T> {
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
  const transaction: RecordingTransaction = { client, open: false };
  try {
    return await work(transaction);
  } catch (error) {
    const invalid = unstorablePayload(error);
    if (invalid) {
      await client.query('rollback').catch(() => {
        discard = true;
      });
      transaction.open = false;
      throw invalid;
    }
    discard = true;
    if (error instanceof WebhookError) throw error;
    throw new UnavailableError('the event could not be recorded', { cause: error });
  } finally {
    client.off('error', onConnectionError);
    client.release(discard || transaction.open);
  }
}

/**
 * `begin`, then `insert`: on a pipelined connection both go out in one write, before either answer (if `begin`
 * failed, the insert fails too).
 */
async function beginWith<R extends pg.QueryResultRow>(
  transaction: RecordingTransaction,
  insert: Statement,
): Promise<pg.QueryResult<R>> {
  const { client } = transaction;
  if (!client.pipeline) {
    await client.query('begin');
    transaction.open = true;
    return client.query<R>(insert);
  }
  const stream = socketOf(client);
  stream?.cork();
  const begun = client.query('begin');
  transaction.open = true;
  const insertion = client.query<R>(insert);
  stream?.uncork();
  const [, inserted] = await Promise.all([begun, insertion]);
  return inserted;
}

/**
 * Ends a transaction that wrote nothing: ending it cannot change the answer, so with a pipeline it goes out
 * behind the answer (the connection's next user queues after it) instead of costing a round trip.
 */
async function endEmpty(transaction: RecordingTransaction): Promise<void> {
  const end = transaction.client.query('commit');
  transaction.open = false;
  if (transaction.client.pipeline) end.catch(() => {});
  else await end;
}

/**
 * The jobs of the events a receiver insert created: each event's job on the default group's queue, and one on the
 * queue of every other group it was delivered to (`CreatedEventRow.groups`), all with the same data.
 */
function jobBatchesFor(
  rows: readonly CreatedEventRow[],
  dataOf: (row: CreatedEventRow) => EventJob,
): JobBatch[] {
  const byQueue = new Map<string, Array<JobInsert<EventJob>>>([[EVENTS_QUEUE, []]]);
  for (const row of rows) {
    const job = { data: dataOf(row) };
    for (const queue of [EVENTS_QUEUE, ...row.groups.map((group) => queuesOf(group).events)]) {
      const jobs = byQueue.get(queue);
      if (jobs) jobs.push(job);
      else byQueue.set(queue, [job]);
    }
  }
  return [...byQueue].map(([queue, jobs]) => ({ queue, jobs }));
}

/** The jobs for one pg-boss queue: the default group's, or another group's. */
interface JobBatch {
  queue: string;
  jobs: Array<JobInsert<EventJob>>;
}

/**
 * Enqueues `batches` (one pg-boss `insert()` per queue, given our `db`) inside the transaction, and commits. pg-boss
 * answers the ids of the jobs it created: it skips an insert its queue's policy forbids, and an event must never
 * be committed without its job. With a pipeline and queues that never skip an insert, the inserts go out together
 * and `commit` follows the last one in the same write (if an insert fails, Postgres answers the commit with a
 * rollback, so both or neither still holds): two round trips per batch whatever the number of queues.
 */
async function insertJobsAndCommit(
  transaction: RecordingTransaction,
  boss: PgBoss,
  batches: readonly JobBatch[],
): Promise<void> {
  const { client } = transaction;
  const standard = await Promise.all(batches.map(({ queue }) => neverSkipsInserts(boss, queue)));
  const commitBehind = client.pipeline && standard.every(Boolean);
  const connection = jobConnection(client, commitBehind, batches.length);
  const insert = ({ queue, jobs }: JobBatch) =>
    boss.insert(queue, jobs, { db: connection.db, returnId: true }).then((ids) => ids?.length ?? 0);
  let created = 0;
  if (!commitBehind) {
    for (const batch of batches) created += await insert(batch);
  } else {
    // Every insert is sent before any answer; the first failure is reported once all have answered.
    const settled = await Promise.allSettled(batches.map(insert));
    for (const outcome of settled) {
      if (outcome.status === 'rejected') throw outcome.reason;
      created += outcome.value;
    }
  }
  const count = batches.reduce((sum, { jobs }) => sum + jobs.length, 0);
  const committed = connection.committed();
  if (committed) {
    const result = await committed;
    transaction.open = false;
    if (result.command !== 'COMMIT')
      throw new Error(`the transaction ended in ${result.command}, not COMMIT`);
    // Cannot happen on a standard queue (checked once per pg-boss instance); say so loudly if it ever does.
    if (created !== count) throw new Error('pg-boss skipped the job of an event that is now recorded');
    return;
  }
  if (created !== count) {
    const queues = batches.map(({ queue }) => `"${queue}"`).join(', ');
    throw new Error(`pg-boss did not create every job (queue ${queues} policy?)`);
  }
  await client.query('commit');
  transaction.open = false;
}
