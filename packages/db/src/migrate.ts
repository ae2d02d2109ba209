import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { PgBoss } from 'pg-boss';

/** The repository's `drizzle/` folder, where drizzle-kit writes the migrations. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../drizzle', import.meta.url));

// Any fixed 64-bit number works; it only has to differ from other advisory locks in the same database.
const MIGRATION_LOCK_KEY = 7_239_114_031n;

export interface MigrateOptions {
  migrationsFolder?: string;
}

/**
 * Applies the Drizzle migrations and installs or upgrades the pg-boss schema.
 *
 * Idempotent, and safe to run from several processes at once: Drizzle's migrator takes no lock of its own,
 * so every run serialises on one session advisory lock, and the later runs find nothing left to apply.
 */
export async function migrateDatabase(connectionString: string, options: MigrateOptions = {}): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'webhook-inbox-migrate' });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await migrate(drizzle({ client }), { migrationsFolder: options.migrationsFolder ?? MIGRATIONS_FOLDER });
    await installPgBoss(connectionString);
  } finally {
    // Closing the session releases the advisory lock too, even if the unlock is never reached.
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => {});
    await client.end();
  }
}

async function installPgBoss(connectionString: string): Promise<void> {
  const boss = new PgBoss({
    connectionString,
    max: 2,
    migrate: true,
    supervise: false,
    schedule: false,
    registerInstance: false,
  });
  await boss.start();
  await boss.stop({ graceful: false, close: true });
}
