/**
 * `statementTimeoutMs` bounds every statement on the effects' connections: PostgreSQL cancels one that runs too
 * long, and a connection that stops answering (a TCP proxy that forwards nothing any more, as behind a network
 * partition) is given up 2 s later. Either way the effect fails and its event is retried, instead of a batch
 * that never ends.
 */
import { useTestDatabase, waitFor, type TcpProxy } from '@webhook-inbox/testing';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/inbox.ts';
import { effectRuns, eventRow, useProxiedWorkerHarness, type Producer } from '../support/harness.ts';
import type { Tx } from '../../src/effects/types.ts';

const db = useTestDatabase();
const harness = useProxiedWorkerHarness(() => db.url);
let pool: pg.Pool;
let producer: Producer;
let proxy: TcpProxy;
beforeAll(() => {
  ({ pool, producer, proxy } = harness);
});

interface Failure {
  ms: number;
  message: string;
  code: unknown;
}

/** A worker behind the proxy whose one database effect runs `firstAttempt` on its first attempt only. */
async function startWorker(type: string, firstAttempt: (tx: Tx) => Promise<unknown>): Promise<Failure[]> {
  const failures: Failure[] = [];
  const inbox = createInbox().on('test', type, {
    slow: async ({ tx, attempt }) => {
      if (attempt > 1) return;
      const started = Date.now();
      try {
        await firstAttempt(tx);
      } catch (error) {
        // Drizzle wraps pg's error ("Failed query: ...") with it as the cause.
        const { message, code } = ((error as { cause?: unknown }).cause ?? error) as {
          message: string;
          code?: unknown;
        };
        failures.push({ ms: Date.now() - started, message, code });
        throw error;
      }
    },
  });
  await harness.start(inbox, { poolSize: 4, statementTimeoutMs: 1_000 });
  return failures;
}

describe('statementTimeoutMs', () => {
  it('PostgreSQL cancels a statement that runs longer; the effect fails and its retry completes', async () => {
    const failures = await startWorker('sleepy', (tx) => tx.execute(sql`select pg_sleep(30)`));
    await producer.send({ eventId: 'evt_sleepy', type: 'sleepy' });
    await waitFor(async () => (await eventRow(pool, 'evt_sleepy'))?.status === 'processed', {
      timeout: 60_000,
      message: 'evt_sleepy processed',
    });

    expect(failures).toHaveLength(1);
    // 57014 query_canceled: "canceling statement due to statement timeout", after about 1 s: not the 30 s the
    // statement asked for (the upper bound is far from both, for a busy machine's scheduling).
    expect(failures[0]).toMatchObject({ code: '57014' });
    expect(failures[0]!.ms).toBeGreaterThanOrEqual(900);
    expect(failures[0]!.ms).toBeLessThan(20_000);
    expect((await effectRuns(pool, 'evt_sleepy')).slow).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('a connection that stops answering mid-transaction is given up, not waited on forever', async () => {
    const failures = await startWorker('hung', async (tx) => {
      const { rows } = await tx.execute<{ port: number }>(sql`select inet_client_port() as port`);
      expect(proxy.hang(rows[0]!.port)).toBe(true);
      // No answer will ever come on this connection.
      await tx.execute(sql`select 1`);
    });
    await producer.send({ eventId: 'evt_hung', type: 'hung' });
    await waitFor(async () => (await eventRow(pool, 'evt_hung'))?.status === 'processed', {
      timeout: 60_000,
      message: 'evt_hung processed',
    });

    expect(failures).toHaveLength(1);
    // The statement timeout (1 s) plus the 2 s the worker gives a silent connection; the connection would never
    // answer, so any finite wait is the worker giving up (the bound leaves room for a busy machine).
    expect(failures[0]!.message).toBe('Query read timeout');
    expect(failures[0]!.ms).toBeGreaterThanOrEqual(2_900);
    expect(failures[0]!.ms).toBeLessThan(30_000);
    expect((await effectRuns(pool, 'evt_hung')).slow).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('refuses a timeout that is not a positive whole number of milliseconds', async () => {
    const inbox = createInbox().on('test', 'x', { noop: () => {} });
    for (const statementTimeoutMs of [0, -1, 1.5, Number.NaN]) {
      await expect(inbox.start({ connectionString: db.url, statementTimeoutMs })).rejects.toThrow(
        /statementTimeoutMs must be a positive whole number/,
      );
    }
  });
});
