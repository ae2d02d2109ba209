import type pg from 'pg';
import { ConsoleError } from './errors.ts';
import type { Statement } from '@webhook-inbox/inbox/sql';

const QUERY_CANCELED = '57014';

/**
 * Runs a console read under its own statement timeout, so a search too broad for the table's size answers a
 * clear 422 instead of holding a connection the receiver needs.
 */
export async function read<T extends pg.QueryResultRow>(
  pool: pg.Pool,
  statement: Statement,
  timeoutMs: number,
): Promise<T[]> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin read only');
    await client.query(`set local statement_timeout = ${Math.trunc(timeoutMs)}`);
    const { rows } = await client.query<T>(statement.text, statement.values);
    await client.query('commit');
    return rows;
  } catch (error) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    if ((error as { code?: unknown }).code === QUERY_CANCELED) {
      throw new ConsoleError(
        'query_too_slow',
        `the search took longer than ${timeoutMs} ms: narrow it (a time range, a status or a provider)`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

/** Runs a write (or a read that needs no deadline) on the pool. */
export async function run<T extends pg.QueryResultRow>(pool: pg.Pool, statement: Statement): Promise<T[]> {
  return (await pool.query<T>(statement.text, statement.values)).rows;
}
