import pg from 'pg';

/**
 * What stands between the processes and PostgreSQL (`DATABASE_POOLER`):
 * - `none`: a direct connection, or a pooler in session mode. Each connection is one server session.
 * - `transaction`: a transaction-mode pooler (PgBouncer `pool_mode = transaction`, RDS Proxy, Supabase's
 *   pooler). Consecutive transactions of one connection may run on different server sessions, so nothing may
 *   outlive a transaction: no named prepared statements, no session settings, no session advisory locks.
 */
export type DatabasePooler = 'none' | 'transaction';

/**
 * A pg client that never names its statements. A named statement is prepared once on the server session and
 * reused by name; behind a transaction-mode pooler the next use can land on a session that never prepared it
 * (`prepared statement "..." does not exist`). Unnamed, each statement is parsed with its own values in the
 * same round trip, which every pooler passes through.
 */
export class UnnamedStatementClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [config] = args;
    if (typeof config === 'object' && config !== null && 'name' in config && config.name !== undefined) {
      const { name: _name, ...unnamed } = config;
      args[0] = unnamed;
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/** The `Client` class a pool uses behind `pooler`. */
export function clientClassFor(pooler: DatabasePooler): typeof pg.Client {
  return pooler === 'transaction' ? UnnamedStatementClient : pg.Client;
}
