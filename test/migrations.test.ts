import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { INBOX_MIGRATIONS, migrateDatabase as migrateInbox, type MigrationSet } from '@webhook-inbox/db';
import { createTestDatabase, type TestDatabase } from '@webhook-inbox/testing';
import { eventPayloads } from '@webhook-inbox/inbox/sql';
import {
  EXAMPLE_MIGRATIONS,
  migrateExampleDatabase as migrateDatabase,
} from '@webhook-inbox/worker/migrations';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';

// The migrations (the inbox's in drizzle/inbox, the example worker's in drizzle/example) and their CLIs (migrate,
// `db:check`). The test lives here rather than in packages/db because it uses the test harness, which itself
// depends on @webhook-inbox/db.
const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const packageDir = path.join(root, 'packages/db');
const workerDir = fileURLToPath(new URL('../apps/worker/', import.meta.url));
const legacyMigrations = fileURLToPath(new URL('fixtures/legacy-migrations', import.meta.url));
const INBOX_TABLES = [
  'alerts_sent',
  'api_tokens',
  'audit_log',
  'auth_failures',
  'console_revoked_sessions',
  'destination_slots',
  'destination_states',
  'effect_attempts',
  'effect_routes',
  'effect_runs',
  'failure_count_deltas',
  'failure_counts',
  'failure_groups',
  'idempotency_keys',
  'inbox_samples',
  'listener_acks',
  'listeners',
  'replay_operation_events',
  'replay_operations',
  'webhook_delivery_counts',
  'webhook_event_groups',
  'webhook_event_payloads',
  'webhook_events',
];
const EXAMPLE_TABLES = [
  'accounts',
  'shopify_compliance_requests',
  'shopify_orders',
  'shopify_shops',
  'subscriptions',
];

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** The public schema's tables, partitions of `webhook_event_payloads` left out. */
async function tables(url: string): Promise<string[]> {
  const rows = await query<{ relname: string }>(
    url,
    `select relname from pg_class
      where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') and not relispartition
      order by 1`,
  );
  return rows.map((row) => row.relname);
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
    `select 'inbox' as set, hash, created_at from drizzle.__webhook_inbox_migrations
     union all
     select 'example', hash, created_at from drizzle.__webhook_inbox_example_migrations
     order by 1, 3`,
  );
  const boss = await query(url, 'select version from pgboss.version');
  return { columns, migrations, boss, layout: await layout(url) };
}

/** The public schema's tables, columns, constraints and indexes: what the migrations built. */
async function layout(url: string) {
  const columns = await query(
    url,
    `select table_name, column_name, data_type, is_nullable, column_default, is_identity
       from information_schema.columns where table_schema = 'public' order by 1, 2`,
  );
  const constraints = await query(
    url,
    `select conrelid::regclass::text as table_name, conname, pg_get_constraintdef(oid) as definition
       from pg_constraint where connamespace = 'public'::regnamespace order by 1, 2`,
  );
  const indexes = await query(
    url,
    `select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by 1, 2`,
  );
  return { columns, constraints, indexes };
}

/** Migrates `url` with the inbox's own migrations up to and including `last` (drizzle/inbox). */
async function migrateInboxUpTo(url: string, last: string): Promise<void> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'inbox-migrations-'));
  try {
    await cp(INBOX_MIGRATIONS.folder, folder, { recursive: true });
    const journalFile = path.join(folder, 'meta/_journal.json');
    const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
    const count = journal.entries.findIndex((entry) => entry.tag === last) + 1;
    expect(count).toBeGreaterThan(0);
    await writeFile(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, count) }));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migrate(drizzle({ client }), {
        migrationsFolder: folder,
        migrationsTable: '__webhook_inbox_migrations',
      });
    } finally {
      await client.end();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Migrates `url` with the first `count` of 0.1's shared migrations (test/fixtures/legacy-migrations). */
async function migrateLegacy(url: string, count: number): Promise<void> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'legacy-migrations-'));
  try {
    await cp(legacyMigrations, folder, { recursive: true });
    const journalFile = path.join(folder, 'meta/_journal.json');
    const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: unknown[] };
    await writeFile(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, count) }));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migrate(drizzle({ client }), { migrationsFolder: folder });
    } finally {
      await client.end();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The tag of the inbox migration before the one that adds consumer groups (their numbers follow main's). */
async function beforeConsumerGroups(): Promise<string> {
  const journal = JSON.parse(
    await readFile(path.join(INBOX_MIGRATIONS.folder, 'meta/_journal.json'), 'utf8'),
  ) as {
    entries: Array<{ tag: string }>;
  };
  const index = journal.entries.findIndex((e) => e.tag.endsWith('_consumer_groups'));
  const previous = journal.entries[index - 1];
  if (index < 1 || !previous) throw new Error('no consumer_groups migration in drizzle/inbox');
  return previous.tag;
}

/** Two teams' drizzle-kit folders of one migration each; team A's was created after team B's. */
async function teamFolders(): Promise<{ dir: string; a: string; b: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'team-migrations-'));
  const folder = async (team: string, when: number): Promise<string> => {
    const out = path.join(dir, team);
    await mkdir(path.join(out, 'meta'), { recursive: true });
    const tag = `0000_${team}_things`;
    await writeFile(path.join(out, `${tag}.sql`), `create table ${team}_things (id integer primary key);`);
    const entry = { idx: 0, version: '7', when, tag, breakpoints: true };
    await writeFile(
      path.join(out, 'meta/_journal.json'),
      JSON.stringify({ version: '7', dialect: 'postgresql', entries: [entry] }),
    );
    return out;
  };
  return { dir, a: await folder('team_a', 1_800_000_000_000), b: await folder('team_b', 1_700_000_000_000) };
}

describe('db:migrate', () => {
  it('brings a database from before consumer groups forward: its routes become the default group, its events stay', async () => {
    database = await createTestDatabase({ migrated: false });
    await migrateInboxUpTo(database.url, await beforeConsumerGroups());
    await query(
      database.url,
      [
        `insert into webhook_events (provider, event_id, type, status) values ('stripe', 'evt_1', 'invoice.paid', 'processed')`,
        `insert into effect_runs (provider, event_id, effect, status, idempotency_key) values ('stripe', 'evt_1', 'markPaid', 'completed', 'k1')`,
        `insert into effect_routes (provider, event_type, effect, kind, position) values ('stripe', 'invoice.paid', 'markPaid', 'database', 0)`,
      ].join(';\n'),
    );

    await migrateDatabase(database.url);

    expect(
      await query(database.url, 'select provider, event_type, effect, consumer_group from effect_routes'),
    ).toEqual([
      { provider: 'stripe', event_type: 'invoice.paid', effect: 'markPaid', consumer_group: 'default' },
    ]);
    expect(await query(database.url, 'select event_id, status from webhook_events')).toEqual([
      { event_id: 'evt_1', status: 'processed' },
    ]);
    expect(await query(database.url, 'select count(*)::int as n from webhook_event_groups')).toEqual([
      { n: 0 },
    ]);
    // A group row needs its event, and goes with it.
    await query(
      database.url,
      `insert into webhook_event_groups (provider, event_id, consumer_group) values ('stripe', 'evt_1', 'billing')`,
    );
    await expect(
      query(
        database.url,
        `insert into webhook_event_groups (provider, event_id, consumer_group) values ('stripe', 'evt_none', 'billing')`,
      ),
    ).rejects.toThrow(/foreign key/);
    await query(database.url, `delete from webhook_events where event_id = 'evt_1'`);
    expect(await query(database.url, 'select count(*)::int as n from webhook_event_groups')).toEqual([
      { n: 0 },
    ]);

    const fresh = await createTestDatabase({ migrated: false });
    try {
      await migrateDatabase(fresh.url);
      expect((await fingerprint(database.url)).layout).toEqual((await fingerprint(fresh.url)).layout);
    } finally {
      await fresh.drop();
    }
  });

  it('applies every migration and the pg-boss schema to an empty database', async () => {
    database = await createTestDatabase({ migrated: false });
    await migrateDatabase(database.url);

    expect(await tables(database.url)).toEqual([...INBOX_TABLES, ...EXAMPLE_TABLES].sort());
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

  // 0.1's last migration, and the one before the console's two (0004, 0005): a database on either upgrades.
  it.each([
    ['0005_console_revoked_sessions', 6],
    ['0003_console_audit_and_replay_operations', 4],
  ])(
    "brings a database migrated by 0.1's shared migrations up to %s to the split layout, keeping its rows",
    async (_last, applied) => {
      database = await createTestDatabase({ migrated: false });
      await migrateLegacy(database.url, applied);
      const rows = [
        `insert into webhook_events (provider, event_id, type, payload) values ('stripe', 'evt_1', 'invoice.paid', '{"id":"evt_1"}')`,
        `insert into effect_runs (provider, event_id, effect, status, idempotency_key) values ('stripe', 'evt_1', 'markPaid', 'completed', 'k1')`,
        `insert into idempotency_keys (key, effect, provider, event_id, status) values ('account:cus_1', 'welcome', 'stripe', 'evt_1', 'completed')`,
        `insert into accounts (stripe_customer_id, email) values ('cus_1', 'a@example.com')`,
        `insert into subscriptions (stripe_subscription_id, customer_id, status, event_created_at) values ('sub_1', 'cus_1', 'active', now())`,
        `insert into shopify_orders (shop_domain, order_id) values ('s.myshopify.com', 9007199254740993)`,
        `insert into audit_log (actor, action) values ('ops', 'login')`,
        `insert into replay_operations (filter, received_up_to, total, created_by) values ('{}', now(), 1, 'ops')`,
      ];
      if (applied === 6) {
        rows.push(
          `insert into alerts_sent (service, kind, fingerprint, provider, occurrences, outcome, headline) values ('worker', 'dead', 'f', 'stripe', 1, 'sent', 'h')`,
          `insert into console_revoked_sessions (session_id, expires_at) values ('s1', now() + interval '1 hour')`,
        );
      }
      await query(database.url, rows.join(';\n'));

      await migrateDatabase(database.url);
      await migrateDatabase(database.url);

      const counts = await query<Record<string, string>>(
        database.url,
        `select ${[...INBOX_TABLES, ...EXAMPLE_TABLES].map((t) => `(select count(*) from ${t}) as ${t}`).join(', ')}`,
      );
      const fromConsole = applied === 6 ? '1' : '0';
      expect(counts[0]).toEqual({
        alerts_sent: fromConsole,
        api_tokens: '0',
        audit_log: '1',
        auth_failures: '0',
        console_revoked_sessions: fromConsole,
        destination_slots: '0',
        destination_states: '0',
        effect_attempts: '0',
        effect_routes: '0',
        effect_runs: '1',
        failure_count_deltas: '0',
        failure_counts: '0',
        failure_groups: '0',
        idempotency_keys: '1',
        inbox_samples: '0',
        listener_acks: '0',
        listeners: '0',
        replay_operation_events: '0',
        replay_operations: '1',
        webhook_delivery_counts: '0',
        webhook_event_groups: '0',
        webhook_event_payloads: '1',
        webhook_events: '1',
        accounts: '1',
        shopify_compliance_requests: '0',
        shopify_orders: '1',
        shopify_shops: '0',
        subscriptions: '1',
      });
      const [order] = await query<{ order_id: string }>(database.url, 'select order_id from shopify_orders');
      expect(order?.order_id).toBe('9007199254740993');

      // The same tables, constraints and indexes, and the same migrations recorded, as a database created by
      // the current migrations (drizzle.__drizzle_migrations, 0.1's record, stays as it was).
      const fresh = await createTestDatabase({ migrated: false });
      try {
        await migrateDatabase(fresh.url);
        const [migrated, created] = [await fingerprint(database.url), await fingerprint(fresh.url)];
        expect(migrated.layout).toEqual(created.layout);
        expect(migrated.migrations).toEqual(created.migrations);
      } finally {
        await fresh.drop();
      }
      expect(
        await query(database.url, 'select count(*)::int as n from drizzle.__drizzle_migrations'),
      ).toEqual([{ n: applied }]);
    },
  );

  it('moves the payloads of a database at 0005 into the daily partitions, events in every state kept as they were', async () => {
    database = await createTestDatabase({ migrated: false });
    await migrateInboxUpTo(database.url, '0005_payload_out_of_line');
    // Every status, three days (today, 3 and 40 days back), a payload retention already nulled, a number past 2^64.
    await query(
      database.url,
      `insert into webhook_events (provider, event_id, type, payload, headers, source, status, attempts, last_error,
                                   received_at, processed_at)
       select 'stripe', 'evt_' || status || '_' || age, 'invoice.paid',
              case when status = 'processed' and age = 40 then null
                   else ('{"id": "evt_' || status || '_' || age || '", "amount": 123456789012345678901234}')::jsonb end,
              '{"stripe-webhook-id": "wh_1"}', 'webhook', status, 2, case when status in ('failed', 'dead') then 'boom' end,
              now() - age * interval '1 day', case when status = 'processed' then now() end
         from unnest(array['received', 'processing', 'failed', 'processed', 'dead']) as status,
              unnest(array[0, 3, 40]) as age;
       insert into effect_runs (provider, event_id, effect, status, idempotency_key)
       select provider, event_id, 'markPaid', 'completed', event_id from webhook_events where status = 'processed';`,
    );
    const eventColumns = `provider, event_id, type, headers, source, status, attempts, last_error, received_at, processed_at`;
    const before = await query(database.url, `select ${eventColumns} from webhook_events order by event_id`);
    const payloadsBefore = await query(
      database.url,
      `select event_id, received_at, payload::text from webhook_events where payload is not null order by event_id`,
    );
    expect(before).toHaveLength(15);
    expect(payloadsBefore).toHaveLength(14);

    await migrateDatabase(database.url);

    expect(await query(database.url, `select ${eventColumns} from webhook_events order by event_id`)).toEqual(
      before,
    );
    expect(
      await query(
        database.url,
        `select event_id, received_at, payload::text from webhook_event_payloads order by event_id`,
      ),
    ).toEqual(payloadsBefore);
    // Each payload in the partition of its UTC day, and read back through the event's key and received_at.
    const partitions = await query<{ partition: string; received_at: Date }>(
      database.url,
      `select tableoid::regclass::text as partition, received_at from webhook_event_payloads`,
    );
    expect(
      partitions.filter((row) => row.partition !== eventPayloads.partitionName(row.received_at)),
    ).toEqual([]);
    const placed = await query<{ unread: number }>(
      database.url,
      `select (select count(*)::int from webhook_events e
                where e.event_id <> 'evt_processed_40'
                  and not exists (select from webhook_event_payloads p
                                   where p.provider = e.provider and p.event_id = e.event_id
                                     and p.received_at = e.received_at)) as unread`,
    );
    expect(placed).toEqual([{ unread: 0 }]);
    expect(await query(database.url, 'select count(*)::int as n from effect_runs')).toEqual([{ n: 3 }]);
    // The days ahead exist, so the receiver can record events as soon as the migration is done.
    const days = await query<{ n: number }>(
      database.url,
      `select count(*)::int as n from pg_inherits
        where inhparent = 'webhook_event_payloads'::regclass and inhrelid::regclass::text >= $1`,
      [eventPayloads.partitionName(new Date())],
    );
    expect(days[0]?.n).toBe(15);
    await query(
      database.url,
      `insert into webhook_event_payloads (provider, event_id, received_at, payload)
       values ('stripe', 'evt_after', now() + interval '13 days', '{}')`,
    );
  });

  it("refuses a database that ran only part of 0.1's shared migrations, changing nothing", async () => {
    database = await createTestDatabase({ migrated: false });
    await migrateLegacy(database.url, 2);
    const before = await layout(database.url);
    await expect(migrateDatabase(database.url)).rejects.toThrow(
      /only part of webhook-inbox 0\.1's migrations/,
    );
    expect(await layout(database.url)).toEqual(before);
  });

  it("leaves a team's own drizzle-kit migrations (drizzle.__drizzle_migrations) alone", async () => {
    database = await createTestDatabase({ migrated: false });
    await query(
      database.url,
      `create schema drizzle;
       create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint);
       insert into drizzle.__drizzle_migrations (hash, created_at) values ('a-team-migration', 1);`,
    );
    await migrateDatabase(database.url);
    expect(await tables(database.url)).toEqual(expect.arrayContaining(INBOX_TABLES));
    expect(await query(database.url, 'select hash from drizzle.__drizzle_migrations')).toEqual([
      { hash: 'a-team-migration' },
    ]);
  });

  it("applies two teams' migrations when each team records them in its own table, as the README says", async () => {
    database = await createTestDatabase({ migrated: false });
    const teams = await teamFolders();
    try {
      // Team A deploys first, with the newer migration; then team B.
      await migrateInbox(database.url, { also: [{ folder: teams.a, table: '__team_a_migrations' }] });
      await migrateInbox(database.url, { also: [{ folder: teams.b, table: '__team_b_migrations' }] });
      expect(await tables(database.url)).toEqual(expect.arrayContaining(['team_a_things', 'team_b_things']));

      // What the README warns of: in one shared table, drizzle skips B's older migration without an error.
      const shared = await createTestDatabase({ migrated: false });
      try {
        const set = (folder: string): MigrationSet => ({ folder, table: '__drizzle_migrations' });
        await migrateInbox(shared.url, { also: [set(teams.a)] });
        await migrateInbox(shared.url, { also: [set(teams.b)] });
        expect(await tables(shared.url)).toContain('team_a_things');
        expect(await tables(shared.url)).not.toContain('team_b_things');
      } finally {
        await shared.drop();
      }
    } finally {
      await rm(teams.dir, { recursive: true, force: true });
    }
  });

  it('succeeds from two processes at once, applying each migration once', async () => {
    database = await createTestDatabase({ migrated: false });
    const env = { ...process.env, DATABASE_URL: database.url };
    const runs = await Promise.allSettled(
      [1, 2].map(() => run(process.execPath, ['src/cli/migrate.ts'], { cwd: packageDir, env })),
    );
    expect(runs.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);

    const journal = JSON.parse(
      await readFile(path.join(INBOX_MIGRATIONS.folder, 'meta/_journal.json'), 'utf8'),
    ) as {
      entries: unknown[];
    };
    const applied = await query(database.url, 'select id from drizzle.__webhook_inbox_migrations');
    expect(applied).toHaveLength(journal.entries.length);
    // packages/db's own command applies the inbox's tables only.
    expect(await tables(database.url)).toEqual(INBOX_TABLES);
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
    // The schema's own imports come along: its parts (`schema-*.ts`) and the lists they check against.
    const parts = (await readdir(path.join(packageDir, 'src'))).filter((name) =>
      /^schema-.+\.ts$/.test(name),
    );
    for (const name of ['statuses.ts', 'check-list.ts', ...parts]) {
      await cp(path.join(packageDir, 'src', name), path.join(dir, name));
    }
    await cp(INBOX_MIGRATIONS.folder, out, { recursive: true });
    return { dir, schema, out };
  }

  /** `db:check` on a schema and a migrations folder; without them, on the inbox's (the command's defaults). */
  function check(schema?: string, out?: string) {
    const args = schema && out ? ['--schema', schema, '--out', out] : [];
    return run(process.execPath, ['src/cli/check.ts', ...args], {
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

  it('finds both sets of migrations in the top-level drizzle/ folder', async () => {
    expect(INBOX_MIGRATIONS.folder).toBe(path.join(root, 'drizzle/inbox'));
    expect(EXAMPLE_MIGRATIONS.folder).toBe(path.join(root, 'drizzle/example'));
    expect(await check()).toMatchObject({ code: 0 });
  });

  it('stamps each migration later than the one before it, its number and file in journal order', async () => {
    // The migrator applies a journal entry only when its `when` is later than the last one a database applied: an
    // entry stamped earlier than its predecessor (branches generated in parallel) is skipped on every upgrade.
    for (const set of [INBOX_MIGRATIONS, EXAMPLE_MIGRATIONS]) {
      const journal = JSON.parse(await readFile(path.join(set.folder, 'meta/_journal.json'), 'utf8')) as {
        entries: { idx: number; when: number; tag: string }[];
      };
      journal.entries.forEach((entry, i) => {
        expect(entry.idx, entry.tag).toBe(i);
        expect(entry.tag.slice(0, 4), entry.tag).toBe(String(i).padStart(4, '0'));
        if (i > 0) expect(entry.when, entry.tag).toBeGreaterThan(journal.entries[i - 1]!.when);
      });
      const files = (await readdir(set.folder)).filter((name) => name.endsWith('.sql')).sort();
      expect(files).toEqual(journal.entries.map((entry) => `${entry.tag}.sql`));
    }
  });

  it("passes for the example worker's schema and migrations", async () => {
    const result = await check(path.join(workerDir, 'src/schema.ts'), EXAMPLE_MIGRATIONS.folder);
    expect(result).toMatchObject({ code: 0 });
  });

  it('fails when a column is added to the schema without a migration', async () => {
    const scratch = await scratchCopy();
    try {
      const source = await readFile(scratch.schema, 'utf8');
      const edited = source.replace(
        "type: text('type').notNull(),",
        "type: text('type').notNull(),\n    nickname: text('nickname'),",
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
