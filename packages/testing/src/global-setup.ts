import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { migrateDatabase, type MigrateOptions } from '@webhook-inbox/db';
import { findFreePort, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { databaseUrl, TEST_APP_ROLE } from './database-url.ts';
import type {} from './database.ts';

/**
 * One PostgreSQL for the whole run: the server in DATABASE_URL when set, else an embedded one in a throwaway
 * directory. A template database is migrated once; each test file clones it (see `useTestDatabase`), grants to
 * the tests' application role (`TEST_APP_ROLE`) included.
 */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupWith(project, {});
}

/** `setup`, migrating the template with `options` too (an application's own migration sets). */
export async function setupWith(project: TestProject, options: MigrateOptions): Promise<() => Promise<void>> {
  let server: EmbeddedPostgres | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    server = await startEmbeddedPostgres({
      dataDir: path.join(
        os.tmpdir(),
        `webhook-inbox-test-pg-${process.pid}-${randomBytes(3).toString('hex')}`,
      ),
      port: await findFreePort(),
      persistent: false,
      unsafeFast: true,
      maxConnections: 400,
    });
    adminUrl = server.url();
  }

  const template = `wi_template_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${template}`);
    // The migrations run as the server's superuser (the tables' owner), and grant the application's role, which the
    // tests' receivers and workers connect as where they use `appUrl` (created here when missing).
    await migrateDatabase(databaseUrl(adminUrl, template), { ...options, appRole: TEST_APP_ROLE });
  } finally {
    await admin.end();
  }

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    if (server) {
      await server.stop();
      return;
    }
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${template} with (force)`);
    await cleanup.end();
  };
}
