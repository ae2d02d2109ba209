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

/**
 * Drizzle over `pool`, whose `transaction()` takes its connection from the pool and gives it back itself.
 *
 * Drizzle's own transaction over a pool keeps the connection checked out when BEGIN fails (drizzle-orm 0.45: BEGIN
 * runs before its try/finally), and BEGIN is where an outage shows behind a transaction pooler: PgBouncer keeps
 * the client's connection and refuses its next statement. Each transaction caught by a database restart would take
 * one connection out of the pool for good. Here the connection goes back for reuse when the transaction committed,
 * or rolled back after the callback's own error; after a failed BEGIN, COMMIT or ROLLBACK its state is unknown,
 * and it is closed. `transactionClient(tx)` is the connection a transaction runs on.
 */
export function createDb(pool: pg.Pool): Database {
  const db = drizzle({ client: pool });
  db.transaction = async (work, config) => {
    const client = await pool.connect();
    let workError: { error: unknown } | undefined;
    let reusable = false;
    try {
      const result = await drizzleOn(client).transaction(async (tx) => {
        clients.set(tx, client);
        try {
          return await work(tx);
        } catch (error) {
          workError = { error };
          throw error;
        }
      }, config);
      reusable = true;
      return result;
    } catch (error) {
      // Drizzle rethrows the callback's own error once its ROLLBACK went through.
      reusable = workError !== undefined && workError.error === error;
      throw error;
    } finally {
      client.release(!reusable);
    }
  };
  return db;
}

const clients = new WeakMap<object, pg.PoolClient>();

/**
 * The connection a transaction of `createDb` runs on: a statement sent on it is part of the transaction, and can
 * be sent as pg takes it (`{ name, text, values }`), named, prepared once per connection, where Drizzle's
 * `tx.execute` parses and plans its text every time. Throws for any other transaction.
 */
export function transactionClient(tx: object): pg.PoolClient {
  const client = clients.get(tx);
  if (!client) throw new Error('not a transaction of createDb(): its connection is unknown');
  return client;
}

// One Drizzle handle per pooled connection, made the first time the connection runs a transaction.
const handles = new WeakMap<pg.PoolClient, NodePgDatabase>();

function drizzleOn(client: pg.PoolClient): NodePgDatabase {
  let handle = handles.get(client);
  if (!handle) {
    handle = drizzle({ client });
    handles.set(client, handle);
  }
  return handle;
}
