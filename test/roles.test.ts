/**
 * The application's database role (packages/db/src/app-role.ts, migration 0014): what the receiver, the worker and
 * the CLI connect as owns nothing. Each "refused" test below was accepted when the application connected as the
 * role that owns the tables (the superuser, before: `pnpm start` and compose): run against `db.url` instead of
 * `db.appUrl`, each fails.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AppRoleError, grantAppRole, migrateDatabase } from '@webhook-inbox/db';
import { ensurePayloadPartitions, listPayloadPartitions } from '@webhook-inbox/inbox/partitions';
import { purgeExpired } from '@webhook-inbox/operator/retention';
import { TEST_APP_ROLE, useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const db = useTestDatabase();
let app: pg.Pool;
let owner: pg.Pool;

beforeAll(() => {
  app = new pg.Pool({ connectionString: db.appUrl, max: 2 });
  owner = new pg.Pool({ connectionString: db.url, max: 2 });
});
afterAll(async () => {
  await app?.end();
  await owner?.end();
});

/** The statement fails as `code` says (42501: insufficient_privilege) and changes nothing. */
async function refused(sql: string, code = '42501'): Promise<void> {
  await expect(app.query(sql), sql).rejects.toMatchObject({ code });
}

async function auditRows(): Promise<number> {
  const { rows } = await owner.query<{ n: number }>('select count(*)::int as n from audit_log');
  return rows[0]!.n;
}

describe("the application's role", () => {
  it('connects as a plain role, not the superuser that owns the tables', async () => {
    const { rows } = await app.query<{ user: string; superuser: boolean }>(
      `select current_user as user, rolsuper as superuser from pg_roles where rolname = current_user`,
    );
    expect(rows[0]).toEqual({ user: TEST_APP_ROLE.name, superuser: false });
  });

  it('appends to the audit log and reads it; refused: UPDATE, DELETE, TRUNCATE (the owner reached the trigger)', async () => {
    await app.query(
      `insert into audit_log (actor, action, target) values ('roles-test', 'test.append', 'x')`,
    );
    const before = await auditRows();
    expect(before).toBeGreaterThan(0);
    await refused(`update audit_log set actor = 'someone else'`);
    await refused('delete from audit_log');
    await refused('truncate audit_log');
    // audit_log_purge keeps its 90 days for the application's role too.
    await refused(`select audit_log_purge(interval '1 day')`, '22023');
    expect(await app.query(`select audit_log_purge(interval '90 days') as n`)).toMatchObject({
      rows: [{ n: '0' }],
    });
    expect(await auditRows()).toBe(before);
  });

  it('refused: switching the triggers off (session_replication_role = replica, DISABLE TRIGGER), accepted before', async () => {
    await refused('set session_replication_role = replica');
    await refused('alter table audit_log disable trigger audit_log_append_only');
    await refused('alter table audit_log disable trigger all');
    // In one transaction, as an attacker would: the first statement fails, the delete never runs.
    const client = await app.connect();
    try {
      await client.query('begin');
      await expect(client.query('set local session_replication_role = replica')).rejects.toMatchObject({
        code: '42501',
      });
      await client.query('rollback');
    } finally {
      client.release();
    }
  });

  it('refused: altering, dropping or creating tables, the inbox’s, pg-boss’s or its own (accepted before)', async () => {
    await refused('alter table webhook_events add column stolen text');
    await refused('alter table effect_runs drop constraint effect_runs_status_check');
    await refused('drop table webhook_event_payloads');
    await refused('drop table audit_log');
    await refused('alter table pgboss.job add column stolen text');
    await refused('create table public.stolen (id int)');
    await refused(`create function public.stolen() returns int language sql as 'select 1'`);
    await refused('alter function audit_log_purge(interval) security invoker');
    const { rows } = await owner.query<{ n: number }>(
      `select count(*)::int as n from pg_class c join pg_roles r on r.oid = c.relowner where r.rolname = $1`,
      [TEST_APP_ROLE.name],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it("keeps the payloads' partitions through the functions: created ahead, expired days detached and dropped", async () => {
    const from = new Date(Date.now() - 40 * 86_400_000);
    const { created } = await ensurePayloadPartitions(app, { from });
    expect(created.length).toBeGreaterThan(20);
    // A partition the function made carries the parent's grants: the application writes and reads it by name.
    await app.query(
      `with event as (
         insert into webhook_events (provider, event_id, type, status, received_at)
         values ('stripe', 'evt_roles_old', 't', 'processed', now() - interval '39 days')
         returning provider, event_id, received_at)
       insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select provider, event_id, received_at, '{}' from event`,
    );
    const [oldest, , leftDetached] = await listPayloadPartitions(app);
    await refused(`alter table "${oldest!.name}" no inherit webhook_event_payloads`);
    await refused(`drop table "${oldest!.name}"`);
    // A purge cut off between a day's detach and its drop left this one detached: the next run drops it.
    await owner.query(`alter table webhook_event_payloads detach partition "${leftDetached!.name}"`);

    const result = await purgeExpired(app, { payloadDays: 30 });
    expect(result).toMatchObject({ complete: true, payloadsPurged: 1 });
    expect(result.payloadPartitionsDropped).toBeGreaterThanOrEqual(9);
    const left = await listPayloadPartitions(app);
    expect(left.map((partition) => partition.name)).not.toContain(oldest!.name);
    for (const gone of [oldest!.name, leftDetached!.name]) {
      const { rows } = await owner.query('select to_regclass($1) as gone', [gone]);
      expect(rows[0], gone).toEqual({ gone: null });
    }
  });

  it('refused: the partition functions on any table but a day of payloads', async () => {
    await refused(`select webhook_inbox_detach_payload_partition('audit_log')`, '22023');
    await refused(`select webhook_inbox_drop_payload_partition('webhook_events')`, '22023');
    await refused(`select webhook_inbox_drop_payload_partition('webhook_event_payloads_p2020_x')`, '22023');
    const attached = (await listPayloadPartitions(app)).at(-1)!;
    await refused(`select webhook_inbox_drop_payload_partition('${attached.name}')`, '55006');
  });
});

describe('the grants (grantAppRole)', () => {
  it('grants a table the owner creates after the migration, as the next migration would', async () => {
    await owner.query('create table public.later_table (id int)');
    await app.query('insert into public.later_table values (1)');
    expect(await app.query('select id from public.later_table')).toMatchObject({ rows: [{ id: 1 }] });
  });

  it('migrating again is a no-op for the grants, and refuses a superuser or the migrating role as the application', async () => {
    await migrateDatabase(db.url, { appRole: TEST_APP_ROLE });
    await refused('delete from audit_log');

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await expect(grantAppRole(client, { name: 'postgres' })).rejects.toThrow(AppRoleError);
      await client.query('create role roles_test_superuser superuser');
      try {
        await expect(grantAppRole(client, { name: 'roles_test_superuser' })).rejects.toThrow(/superuser/);
      } finally {
        await client.query('drop role roles_test_superuser');
      }
      await expect(grantAppRole(client, { name: 'roles_test_missing' })).rejects.toThrow(/does not exist/);
    } finally {
      await client.end();
    }
  });

  it('pnpm db:migrate with MIGRATION_DATABASE_URL creates DATABASE_URL’s role and grants it, nothing more', async () => {
    const role = 'roles_test_cli_app';
    const appUrl = new URL(db.url);
    appUrl.username = role;
    appUrl.password = 'roles-test-cli-password';
    const { DATABASE_URL: _, MIGRATION_DATABASE_URL: _m, ...env } = process.env;
    const migrated = spawnSync(
      process.execPath,
      [fileURLToPath(new URL('../apps/worker/src/cli/migrate.ts', import.meta.url))],
      { env: { ...env, MIGRATION_DATABASE_URL: db.url, DATABASE_URL: appUrl.toString() }, encoding: 'utf8' },
    );
    const client = new pg.Client({ connectionString: appUrl.toString() });
    try {
      expect(migrated.status, migrated.stderr).toBe(0);
      expect(migrated.stdout).toContain(`${role} granted`);
      await client.connect();
      await client.query(`insert into audit_log (actor, action) values ('cli-role', 'test.append')`);
      await expect(client.query('delete from audit_log')).rejects.toMatchObject({ code: '42501' });
      await expect(client.query('drop table webhook_events')).rejects.toMatchObject({ code: '42501' });
    } finally {
      await client.end().catch(() => {});
      // The role is the server's, not this database's: its grants go, then it does.
      await owner.query(`drop owned by ${role}`).catch(() => {});
      await owner.query(`drop role if exists ${role}`);
    }
  });
});
