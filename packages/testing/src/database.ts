import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { appRoleUrl, databaseUrl } from './database-url.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string with the right to CREATE DATABASE on the test server. */
    adminDatabaseUrl: string;
    /** A migrated database that each test file clones. */
    templateDatabase: string;
  }
}

export interface TestDatabase {
  readonly name: string;
  /** As the server's superuser, the tables' owner: for a test's setup and its own reads. */
  readonly url: string;
  /** As the application's role (`TEST_APP_ROLE`), which owns nothing: what the receiver and the worker connect as. */
  readonly appUrl: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database on the test server: a clone of the migrated template by default, or empty (`migrated:
 * false`) for tests of the migrations themselves.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `wi_test_${randomBytes(6).toString('hex')}`;
  const template = options.migrated === false ? 'template0' : inject('templateDatabase');
  // FILE_COPY clones by copying files: much faster than WAL_LOG for a small template.
  await admin((c) => c.query(`create database ${name} template ${template} strategy file_copy`));
  const url = databaseUrl(inject('adminDatabaseUrl'), name);
  return {
    name,
    url,
    appUrl: appRoleUrl(url),
    drop: () => admin((c) => dropDatabase(c, name)),
  };
}

/**
 * Drops a test database once the test's own connections are gone. A pool's `end()` resolves as soon as its clients
 * are told to close, before their sockets have: forcing the drop at once would terminate a client that is still
 * closing, whose `terminating connection` error then has no listener and fails the run. So the drop waits (up to
 * 2 s) for the database's sessions to end, then forces out whatever is left (a test that leaked a connection).
 */
async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const { rows } = await client.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where datname = $1',
      [name],
    );
    if ((rows[0]?.n ?? 0) === 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await client.query(`drop database if exists ${name} with (force)`);
}

/**
 * Gives the calling test file its own migrated database for all its tests, dropped afterwards.
 * Read `db.url` inside tests or hooks (it is set in `beforeAll`).
 */
export function useTestDatabase(): { readonly url: string; readonly appUrl: string; readonly name: string } {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return {
    get url() {
      if (!database) throw new Error('useTestDatabase(): the database exists only inside tests and hooks');
      return database.url;
    },
    get appUrl() {
      if (!database) throw new Error('useTestDatabase(): the database exists only inside tests and hooks');
      return database.appUrl;
    },
    get name() {
      if (!database) throw new Error('useTestDatabase(): the database exists only inside tests and hooks');
      return database.name;
    },
  };
}
