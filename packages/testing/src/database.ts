import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { databaseUrl } from './database-url.ts';

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
  readonly url: string;
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
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/**
 * Gives the calling test file its own migrated database for all its tests, dropped afterwards.
 * Read `db.url` inside tests or hooks (it is set in `beforeAll`).
 */
export function useTestDatabase(): { readonly url: string; readonly name: string } {
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
    get name() {
      if (!database) throw new Error('useTestDatabase(): the database exists only inside tests and hooks');
      return database.name;
    },
  };
}
