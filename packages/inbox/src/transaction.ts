import type pg from 'pg';

/**
 * Runs `work` in a transaction on one connection of the pool: commits when it returns, rolls back when it throws.
 * A connection whose transaction failed may be broken and is discarded, unless the error is one `work` throws on
 * purpose after healthy statements (`refusal`, e.g. a typed error): then it goes back to the pool.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  refusal: (error: unknown) => boolean = () => false,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    broken = !refusal(error);
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release(broken);
  }
}
