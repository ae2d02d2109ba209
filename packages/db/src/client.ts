import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { clientClassFor, type DatabasePooler } from './pooler.ts';
/**
 * A Drizzle handle without a relational schema: its query builders take any table, the inbox's (`./schema.ts`)
 * or a team's own, so effects write their tables through the same `tx` as the inbox's ledger row.
 */
export type Database = NodePgDatabase & { $client: pg.Pool };

export interface PoolOptions {
  connectionString: string;
  /** Upper bound on connections this process opens. */
  max?: number;
  applicationName?: string;
  /** How long a checkout may wait for a free connection before failing (ms). */
  connectionTimeoutMillis?: number;
  /** Called for errors on idle clients (e.g. the server restarted); without a listener pg crashes the process. */
  onError?: (error: Error) => void;
  /** A transaction-mode pooler in front of the database: statements go unnamed (`./pooler.ts`). */
  pooler?: DatabasePooler;
}

// Postgres int8 arrives as a string by default; keep it that way (ids above 2^53 must not pass through a JS
// number). Drizzle's `bigint({ mode: 'bigint' })` columns convert from that exact text.
export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'webhook-inbox',
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
    idleTimeoutMillis: 30_000,
    Client: clientClassFor(options.pooler ?? 'none'),
  });
  const onError = options.onError ?? (() => {});
  pool.on('error', onError);
  // pg listens for errors only on idle clients: a connection that dies while checked out (a server restart
  // mid-transaction) would emit an unhandled 'error' and crash the process. The query in flight rejects
  // anyway and the pool discards the client on release; this listener only keeps the process alive.
  pool.on('connect', (client) => client.on('error', onError));
  return pool;
}

export function createDb(pool: pg.Pool): Database {
  return drizzle({ client: pool });
}
