/**
 * A database outage behind a transaction-mode pooler. PgBouncer keeps the worker's connections open while the
 * server is gone and answers their next statement (a transaction's BEGIN) with an error, so an effect
 * transaction can fail after its connection was checked out, at its very first statement. Every such
 * transaction must give its connection back: a worker whose pool leaked them could not claim, settle or mark
 * anything again once the database was back.
 *
 * PgBouncer reaches the test database through a TCP proxy the test cuts (every server connection reset, new
 * ones refused) from inside the first effect of a batch, so the batch's other effects meet the outage.
 */
import { createPool } from '@webhook-inbox/db';
import { TcpProxy, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { requirePgBouncer, startPgBouncer, type PgBouncer } from '@webhook-inbox/testing/pgbouncer';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox, type InboxWorker } from '../../src/inbox.ts';
import type { QueueSettings } from '../../src/queue.ts';
import { effectRuns, eventRow, FAST_RETRIES, startProducer, type Producer } from '../support/harness.ts';
import { database } from '../../src/effects/types.ts';

const EVENTS = 12;
const POOL_SIZE = 4;
// Jobs whose failure could not be reported during the outage come back after this expiry.
const QUEUE: QueueSettings = { ...FAST_RETRIES, retryLimit: 5, expireInSeconds: 5 };

const db = useTestDatabase();
let pool: pg.Pool;
const withPgBouncer = requirePgBouncer();
let producer: Producer;
let proxy: TcpProxy;
let bouncer: PgBouncer;
let worker: InboxWorker | undefined;

beforeAll(async () => {
  if (!withPgBouncer) return;
  pool = createPool({ connectionString: db.url, max: 3 });
  producer = await startProducer(pool, db.url, QUEUE);
  proxy = await TcpProxy.start(db.url);
  bouncer = await startPgBouncer({ serverUrl: proxy.url(db.url) });
});
afterAll(async () => {
  if (!withPgBouncer) return;
  await proxy.restore();
  await worker?.stop({ timeoutMs: 5_000 });
  await bouncer.stop();
  await proxy.close();
  await producer.stop();
  await pool.end();
});

/**
 * Waits until PgBouncer answers at once that the server cannot be reached. Its first statements after the cut wait
 * for a server connection instead (as long as the outage lasts): the effects must meet the refusal, not the wait.
 */
async function untilPgBouncerFailsFast(): Promise<void> {
  for (;;) {
    const probe = new pg.Client({ connectionString: bouncer.url(proxy.url(db.url)), query_timeout: 500 });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.query('select 1');
    } catch (error) {
      if ((error as Error).message.includes('server login has been failing')) return;
    } finally {
      await probe.end().catch(() => undefined);
    }
  }
}

describe.runIf(withPgBouncer)('database effects behind PgBouncer through an outage', () => {
  it('each transaction refused at BEGIN returns its connection: the worker processes again once the database is back', async () => {
    const failures: string[] = [];
    const logger = pino(
      { level: 'warn' },
      {
        write: (line: string) => {
          const { msg } = JSON.parse(line) as { msg: string };
          if (msg === 'effect failed') failures.push(line);
        },
      },
    );
    let cut = false;
    const inbox = createInbox({ logger }).on('test', 'signup', {
      save: database({
        run: async ({ tx }) => {
          if (!cut) {
            cut = true;
            await proxy.cut();
            await untilPgBouncerFailsFast();
          }
          await tx.execute(sql`select 1`);
        },
      }),
    });
    const ids = Array.from({ length: EVENTS }, (_, i) => `evt_pooler_outage_${i}`);
    for (const eventId of ids) await producer.send({ eventId, type: 'signup' });

    // Fewer connections than events: one leaked per refused BEGIN would leave the pool empty for good.
    worker = await inbox.start({
      connectionString: bouncer.url(proxy.url(db.url)),
      pooler: 'transaction',
      queue: QUEUE,
      pollingIntervalSeconds: 0.5,
      superviseIntervalSeconds: 1,
      poolSize: POOL_SIZE,
      // One fetch takes every event: the whole batch meets the outage as its first effect starts.
      batchSize: EVENTS,
      concurrency: 1,
    });
    // The outage lasts until more transactions failed at BEGIN than the pool has connections: each of them got
    // its connection back (a leaked one would have left the next waiting forever).
    const refusedAtBegin = () => failures.filter((line) => line.includes('Failed query: begin')).length;
    await waitFor(() => refusedAtBegin() > POOL_SIZE, {
      timeout: 20_000,
      message: `more than ${POOL_SIZE} effect transactions refused at BEGIN during the outage`,
    });
    await proxy.restore();

    for (const eventId of ids) {
      await waitFor(async () => (await eventRow(pool, eventId))?.status === 'processed', {
        timeout: 30_000,
        message: `${eventId} processed after the outage`,
      });
      expect((await effectRuns(pool, eventId)).save).toMatchObject({ status: 'completed' });
    }
  });
});
