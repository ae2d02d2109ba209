import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { PgBoss } from 'pg-boss';

/**
 * A folder of drizzle-kit migrations and the table (in the `drizzle` schema) that records which ran. Each set
 * has its own table, so the inbox's migrations, an application's and a team's own drizzle-kit migrations (in
 * drizzle's default `__drizzle_migrations`) never see each other's entries.
 */
export interface MigrationSet {
  folder: string;
  table: string;
}

/** The inbox's own tables (`webhook_events`, `effect_runs`, ...), shipped inside this package. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));
export const INBOX_MIGRATIONS: MigrationSet = {
  folder: MIGRATIONS_FOLDER,
  table: '__webhook_inbox_migrations',
};

/**
 * Databases migrated by webhook-inbox 0.1 recorded one shared set (inbox and example tables together) in
 * drizzle's default table. drizzle records a migration by its SQL file's sha256: these are 0.1's four, the last
 * being `0003_console_audit_and_replay_operations`. A database that ran all four already has every table the
 * first migration of each current set creates.
 */
const LEGACY_TABLE = '__drizzle_migrations';
const LEGACY_HASHES = [
  '97a98979ec3dce61e8b3b70f4becf987ac28429d7541efff61ee3f5a638734b7',
  '7caad49631e311a5d586357c2d8b1b13e19686e6360af125091a41cd05fb65aa',
  '13bdb2a5a769bbde3b37297bea251b0445a48185e8087459c4f480459ec75249',
  'f3adbefb92674b723f6834150f138163c10a02a7a27cc1d973ccd37c27298d98',
];

// Any fixed 64-bit number works; it only has to differ from other advisory locks in the same database.
const MIGRATION_LOCK_KEY = 7_239_114_031n;

export interface MigrateOptions {
  /** Applied after the inbox's own, in order (an application's tables, e.g. apps/worker's example). */
  also?: readonly MigrationSet[];
}

/**
 * Applies the inbox's migrations (then `options.also`) and installs or upgrades the pg-boss schema.
 *
 * Idempotent, and safe to run from several processes at once: Drizzle's migrator takes no lock of its own,
 * so every run serialises on one session advisory lock, and the later runs find nothing left to apply.
 */
export async function migrateDatabase(connectionString: string, options: MigrateOptions = {}): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'webhook-inbox-migrate' });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    for (const set of [INBOX_MIGRATIONS, ...(options.also ?? [])]) await applyMigrationSet(client, set);
    await installPgBoss(connectionString);
  } finally {
    // Closing the session releases the advisory lock too, even if the unlock is never reached.
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => {});
    await client.end();
  }
}

async function applyMigrationSet(client: pg.Client, set: MigrationSet): Promise<void> {
  await adoptLegacyDatabase(client, set);
  await migrate(drizzle({ client }), { migrationsFolder: set.folder, migrationsTable: set.table });
}

/**
 * On a database that 0.1 migrated to its last migration, records the set's first migration as applied
 * without running it: its tables are there already, with their rows. Later migrations of the set then run as
 * on any database. A 0.1 database short of its last migration is refused: its tables differ from what the
 * first migration creates.
 */
async function adoptLegacyDatabase(client: pg.Client, set: MigrationSet): Promise<void> {
  const { rows } = await client.query<{ legacy: boolean; adopted: boolean }>(
    `select to_regclass('drizzle.${LEGACY_TABLE}') is not null as legacy, to_regclass($1) is not null as adopted`,
    [`drizzle."${set.table}"`],
  );
  if (!rows[0]?.legacy || rows[0].adopted) return;
  // drizzle's default table also records a team's own drizzle-kit migrations: only 0.1's count.
  const applied = await client.query<{ hash: string }>(
    `select hash from drizzle.${LEGACY_TABLE} where hash = any($1::text[])`,
    [LEGACY_HASHES],
  );
  if (applied.rowCount === 0) return;
  if (!applied.rows.some((row) => row.hash === LEGACY_HASHES.at(-1))) {
    throw new Error(
      "this database ran only part of webhook-inbox 0.1's migrations (drizzle.__drizzle_migrations): " +
        "apply 0.1's remaining migrations first",
    );
  }
  const [first] = readMigrationFiles({ migrationsFolder: set.folder });
  if (!first) return;
  await client.query('create schema if not exists drizzle');
  await client.query(
    `create table drizzle."${set.table}" (id serial primary key, hash text not null, created_at bigint)`,
  );
  await client.query(`insert into drizzle."${set.table}" (hash, created_at) values ($1, $2)`, [
    first.hash,
    first.folderMillis,
  ]);
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
