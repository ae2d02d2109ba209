import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { migrateDatabase } from '@webhook-inbox/db';
import { createTestDatabase, type TestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';

// The db package's migrations and its CLIs (`db:migrate`, `db:check`). The test lives here rather than in
// packages/db because it uses the test harness, which itself depends on @webhook-inbox/db.
const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('../packages/db/', import.meta.url));
const CONTRACT_TABLES = [
  'accounts',
  'effect_runs',
  'shopify_orders',
  'shopify_shops',
  'subscriptions',
  'webhook_events',
];

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Everything a migration could change, as one comparable value. */
async function fingerprint(url: string) {
  const columns = await query(
    url,
    `select table_schema, table_name, column_name, data_type, is_nullable, column_default
       from information_schema.columns
      where table_schema in ('public', 'pgboss', 'drizzle')
      order by 1, 2, 3`,
  );
  const migrations = await query(
    url,
    'select hash, created_at from drizzle.__drizzle_migrations order by id',
  );
  const boss = await query(url, 'select version from pgboss.version');
  return { columns, migrations, boss };
}

describe('db:migrate', () => {
  it('applies every migration and the pg-boss schema to an empty database', async () => {
    database = await createTestDatabase({ migrated: false });
    await migrateDatabase(database.url);

    const tables = await query<{ table_name: string }>(
      database.url,
      `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(CONTRACT_TABLES));
    const [boss] = await query<{ version: number }>(database.url, 'select version from pgboss.version');
    expect(boss?.version).toBeGreaterThan(0);
  });

  it('is a no-op the second time', async () => {
    database = await createTestDatabase({ migrated: false });
    await migrateDatabase(database.url);
    const first = await fingerprint(database.url);
    await migrateDatabase(database.url);
    expect(await fingerprint(database.url)).toEqual(first);
    expect(first.migrations.length).toBeGreaterThan(0);
  });

  it('succeeds from two processes at once, applying each migration once', async () => {
    database = await createTestDatabase({ migrated: false });
    const env = { ...process.env, DATABASE_URL: database.url };
    const runs = await Promise.allSettled(
      [1, 2].map(() => run(process.execPath, ['src/cli/migrate.ts'], { cwd: packageDir, env })),
    );
    expect(runs.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);

    const journal = JSON.parse(
      await readFile(path.join(packageDir, '../../drizzle/meta/_journal.json'), 'utf8'),
    ) as {
      entries: unknown[];
    };
    const applied = await query(database.url, 'select id from drizzle.__drizzle_migrations');
    expect(applied).toHaveLength(journal.entries.length);
    const tables = await query<{ table_name: string }>(
      database.url,
      `select table_name from information_schema.tables where table_schema = 'public'`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(CONTRACT_TABLES));
  });

  it('explains a missing DATABASE_URL', async () => {
    const { DATABASE_URL: _, ...env } = process.env;
    const result = await run(process.execPath, ['src/cli/migrate.ts'], {
      cwd: packageDir,
      env: { ...env, INIT_CWD: packageDir },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toContain('DATABASE_URL is not set');
  });
});

describe('db:check', () => {
  // A scratch copy inside the package, so the copied schema still resolves drizzle-orm from node_modules.
  async function scratchCopy(): Promise<{ dir: string; schema: string; out: string }> {
    const dir = await mkdtemp(path.join(packageDir, '.scratch-'));
    const schema = path.join(dir, 'schema.ts');
    const out = path.join(dir, 'drizzle');
    await cp(path.join(packageDir, 'src/schema.ts'), schema);
    // The schema's own imports come along.
    await cp(path.join(packageDir, 'src/statuses.ts'), path.join(dir, 'statuses.ts'));
    await cp(path.join(packageDir, '../../drizzle'), out, { recursive: true });
    return { dir, schema, out };
  }

  function check(schema: string, out: string) {
    return run(process.execPath, ['src/cli/check.ts', '--schema', schema, '--out', out], {
      cwd: packageDir,
    }).then(
      (ok) => ({ code: 0, output: ok.stdout + ok.stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: error.stdout + error.stderr,
      }),
    );
  }

  it('passes when the schema and the migrations agree', async () => {
    const scratch = await scratchCopy();
    try {
      expect(await check(scratch.schema, scratch.out)).toMatchObject({ code: 0 });
    } finally {
      await rm(scratch.dir, { recursive: true, force: true });
    }
  });

  it('fails when a column is added to the schema without a migration', async () => {
    const scratch = await scratchCopy();
    try {
      const source = await readFile(scratch.schema, 'utf8');
      const edited = source.replace(
        "email: text('email').notNull(),",
        "email: text('email').notNull(),\n  nickname: text('nickname'),",
      );
      expect(edited).not.toEqual(source);
      await writeFile(scratch.schema, edited);
      const result = await check(scratch.schema, scratch.out);
      expect(result.code).toBe(1);
      expect(result.output).toContain('ADD COLUMN "nickname"');
    } finally {
      await rm(scratch.dir, { recursive: true, force: true });
    }
  });
});
