import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { grantAppRole, type AppRole } from './app-role.ts';

/**
 * A folder of drizzle-kit migrations and the table (in the `drizzle` schema) that records which ran. Each set
 * has its own table, so the inbox's migrations, an application's and a team's own drizzle-kit migrations (in
 * drizzle's default `__drizzle_migrations`) never see each other's entries.
 */
export interface MigrationSet {
  folder: string;
  table: string;
  /**
   * For a database migrated by webhook-inbox 0.1's single migrations folder: entry i lists the 0.1 migrations
   * (by sha256 of their SQL, as drizzle records them) that together did what the set's migration i does. Those
   * the database ran are recorded in the set's table without running again.
   */
  legacy?: readonly (readonly string[])[];
}

/**
 * webhook-inbox 0.1 kept the inbox's and the example product's tables in one migrations folder, recorded in
 * drizzle's default table. Its first four migrations built both; `0004_alerts_sent` and
 * `0005_console_revoked_sessions` are byte for byte the inbox's `0001` and `0002`.
 */
const LEGACY_TABLE = '__drizzle_migrations';
export const LEGACY_SHARED_MIGRATIONS: readonly string[] = [
  '97a98979ec3dce61e8b3b70f4becf987ac28429d7541efff61ee3f5a638734b7',
  '7caad49631e311a5d586357c2d8b1b13e19686e6360af125091a41cd05fb65aa',
  '13bdb2a5a769bbde3b37297bea251b0445a48185e8087459c4f480459ec75249',
  'f3adbefb92674b723f6834150f138163c10a02a7a27cc1d973ccd37c27298d98',
];

/**
 * The inbox's own tables (`webhook_events`, `effect_runs`, ...). The repository keeps them in its top-level
 * `drizzle/inbox/`; the build copies them into `dist/drizzle/`, next to this module compiled, which is where the
 * published package carries them. In the workspace this module runs from `src/`, where no copy is ever made.
 */
const PACKED_MIGRATIONS = fileURLToPath(new URL('./drizzle', import.meta.url));
export const MIGRATIONS_FOLDER = existsSync(PACKED_MIGRATIONS)
  ? PACKED_MIGRATIONS
  : fileURLToPath(new URL('../../../drizzle/inbox', import.meta.url));
export const INBOX_MIGRATIONS: MigrationSet = {
  folder: MIGRATIONS_FOLDER,
  table: '__webhook_inbox_migrations',
  legacy: [
    LEGACY_SHARED_MIGRATIONS,
    ['8b30dd46ca32ed53ac338fbdd9113f18ed3395cdb57d66bc70abbda39ed9738e'],
    ['d5fb999e513107c2f3a70d81ccf6c902808fe063b35b7fbe7ba3dcb4a3908914'],
  ],
};

// Any fixed 64-bit number works; it only has to differ from other advisory locks in the same database.
const MIGRATION_LOCK_KEY = 7_239_114_031n;

export interface MigrateOptions {
  /** Applied after the inbox's own, in order (an application's tables, e.g. apps/worker's example). */
  also?: readonly MigrationSet[];
  /**
   * The role the application connects as, when it is not the one migrating (`appRoleOf`): created if missing, and
   * granted what it needs on every table, the ones these migrations just added included (`grantAppRole`).
   */
  appRole?: AppRole;
}

/**
 * Applies the inbox's migrations (then `options.also`), installs or upgrades the pg-boss schema, and grants the
 * application's role (`options.appRole`) what it needs. `connectionString` is the owner's: the role that creates
 * and owns the tables.
 *
 * Idempotent, and safe to run from several processes at once: Drizzle's migrator takes no lock of its own,
 * so every run serialises on one advisory lock, and the later runs find nothing left to apply. The lock is a
 * transaction's, held by a transaction left open on a connection of its own until the end: a session lock would
 * stay behind on whichever server session a transaction-mode pooler gave that statement.
 */
export async function migrateDatabase(connectionString: string, options: MigrateOptions = {}): Promise<void> {
  const lock = new pg.Client({ connectionString, application_name: 'webhook-inbox-migrate-lock' });
  const client = new pg.Client({ connectionString, application_name: 'webhook-inbox-migrate' });
  try {
    await lock.connect();
    await lock.query('begin');
    await lock.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await client.connect();
    for (const set of [INBOX_MIGRATIONS, ...(options.also ?? [])]) await applyMigrationSet(client, set);
    await installPgBoss(connectionString);
    if (options.appRole) await grantAppRole(client, options.appRole);
  } finally {
    await client.end().catch(() => {});
    // Ending the lock's transaction (or its connection) releases the lock.
    await lock.query('rollback').catch(() => {});
    await lock.end().catch(() => {});
  }
}

async function applyMigrationSet(client: pg.Client, set: MigrationSet): Promise<void> {
  await adoptLegacyDatabase(client, set);
  await migrate(drizzle({ client }), { migrationsFolder: set.folder, migrationsTable: set.table });
}

/**
 * On a database that 0.1's migrations built, records in the set's own table the migrations 0.1 already ran
 * (`set.legacy`), once: the set's table does not exist yet. Its later migrations then run as on any database.
 * A database that ran only some of the 0.1 migrations one of the set's migrations stands for is refused: its
 * tables are neither before nor after that migration.
 */
async function adoptLegacyDatabase(client: pg.Client, set: MigrationSet): Promise<void> {
  if (!set.legacy) return;
  const { rows } = await client.query<{ legacy: boolean; adopted: boolean }>(
    `select to_regclass('drizzle.${LEGACY_TABLE}') is not null as legacy, to_regclass($1) is not null as adopted`,
    [`drizzle."${set.table}"`],
  );
  if (!rows[0]?.legacy || rows[0].adopted) return;
  // drizzle's default table also records a team's own drizzle-kit migrations: only 0.1's count.
  const { rows: ran } = await client.query<{ hash: string }>(
    `select hash from drizzle.${LEGACY_TABLE} where hash = any($1::text[])`,
    [set.legacy.flat()],
  );
  const applied = new Set(ran.map((row) => row.hash));
  const files = readMigrationFiles({ migrationsFolder: set.folder });
  const adopted: MigrationMeta[] = [];
  for (const [index, hashes] of set.legacy.entries()) {
    const count = hashes.filter((hash) => applied.has(hash)).length;
    if (count === 0) break;
    if (count < hashes.length) {
      throw new Error(
        "this database ran only part of webhook-inbox 0.1's migrations (drizzle.__drizzle_migrations): " +
          "apply 0.1's remaining migrations first",
      );
    }
    const file = files[index];
    if (file) adopted.push(file);
  }
  if (adopted.length === 0) return;
  await client.query('create schema if not exists drizzle');
  await client.query(
    `create table drizzle."${set.table}" (id serial primary key, hash text not null, created_at bigint)`,
  );
  for (const file of adopted) {
    await client.query(`insert into drizzle."${set.table}" (hash, created_at) values ($1, $2)`, [
      file.hash,
      file.folderMillis,
    ]);
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
