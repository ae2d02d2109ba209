import type pg from 'pg';

/**
 * The application's database role: what the receiver, the worker and the CLI's operational commands connect as. It
 * owns nothing. It reads and writes the rows of the tables in `public` (the inbox's and the application's own) and
 * in `pgboss`, only reads and appends to `audit_log`, and runs the four SECURITY DEFINER functions of migration 0014
 * (a day's payload partition created, detached, dropped; old audit rows purged). It cannot create, alter, drop or
 * truncate a table, disable a trigger, or change `session_replication_role` (a superuser's setting): whatever its
 * credential falls into, the audit log stays append-only. The migrations run as another role, which owns the tables.
 */
export interface AppRole {
  name: string;
  /** Used only to create the role when it does not exist yet (the migrating role then needs CREATEROLE). */
  password?: string;
}

/** pg-boss's schema (its default, which every pg-boss of ours uses). */
const BOSS_SCHEMA = 'pgboss';
const SCHEMAS = ['public', BOSS_SCHEMA] as const;

/** The functions of migration 0014 the application's role may run. */
const DEFINER_FUNCTIONS = [
  'webhook_inbox_create_payload_partition(date)',
  'webhook_inbox_detach_payload_partition(text)',
  'webhook_inbox_drop_payload_partition(text)',
  'audit_log_purge(interval)',
] as const;

/** The application's role cannot be given what it needs without doing something it should not: the message says what. */
export class AppRoleError extends Error {
  readonly code = 'app_role_refused';
  constructor(message: string) {
    super(message);
    this.name = 'AppRoleError';
  }
}

/**
 * The application's role named by the user of `appUrl` (DATABASE_URL), when it is not the migrating role of
 * `migrationUrl` (MIGRATION_DATABASE_URL); undefined for a deployment with one role, which owns the tables and
 * needs no grants. The password is that of `appUrl`, to create the role when it does not exist.
 */
export function appRoleOf(migrationUrl: string, appUrl: string): AppRole | undefined {
  const app = new URL(appUrl);
  const name = decodeURIComponent(app.username);
  if (!name) throw new AppRoleError('DATABASE_URL names no user: it is the role the application connects as');
  if (name === decodeURIComponent(new URL(migrationUrl).username)) return undefined;
  const password = decodeURIComponent(app.password);
  return password ? { name, password } : { name };
}

/**
 * Creates the application's role when it does not exist (with `role.password`), then grants it what it needs on
 * the tables that exist now and, as default privileges, on those the migrating role creates later: idempotent, and
 * run at the end of every migration (`migrateDatabase`), so a table a later migration adds is granted as well. In
 * one transaction. Refuses a role that is the migrating role itself, a superuser, one that bypasses row security,
 * or one that owns a table of this database's (a deployment migrated as that role: `REASSIGN OWNED` first).
 */
export async function grantAppRole(client: pg.Client, role: AppRole): Promise<void> {
  const app = client.escapeIdentifier(role.name);
  await client.query('begin');
  try {
    await ensureRole(client, role);
    const database = client.escapeIdentifier(
      (await client.query<{ name: string }>('select current_database() as name')).rows[0]!.name,
    );
    await client.query(`grant connect on database ${database} to ${app}`);
    for (const schema of SCHEMAS) {
      await client.query(`grant usage on schema ${schema} to ${app}`);
      await client.query(`grant select, insert, update, delete on all tables in schema ${schema} to ${app}`);
      await client.query(`grant usage, select on all sequences in schema ${schema} to ${app}`);
      // Tables and sequences the migrating role creates later (its next migrations, a team's own drizzle-kit
      // migrations run as the same role): granted as they are created.
      await client.query(
        `alter default privileges in schema ${schema} grant select, insert, update, delete on tables to ${app}`,
      );
      await client.query(
        `alter default privileges in schema ${schema} grant usage, select on sequences to ${app}`,
      );
    }
    // The audit log is read and appended to, never changed: the trigger of 0009 refuses the rest to its owner too,
    // and without the privileges the application's role cannot get as far as the trigger.
    await client.query(`revoke update, delete, truncate on public.audit_log from ${app}`);
    for (const fn of DEFINER_FUNCTIONS) await client.query(`grant execute on function ${fn} to ${app}`);
    await refuseCreateOnPublic(client, role.name);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  }
}

async function ensureRole(client: pg.Client, role: AppRole): Promise<void> {
  const { rows } = await client.query<{
    self: boolean;
    superuser: boolean;
    bypassrls: boolean;
    owns: string | null;
  }>(
    `select r.rolname = current_user as self, r.rolsuper as superuser, r.rolbypassrls as bypassrls,
            (select format('%I.%I', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
              where c.relowner = r.oid and n.nspname = any($2::text[]) limit 1) as owns
       from pg_roles r where r.rolname = $1`,
    [role.name, SCHEMAS],
  );
  const found = rows[0];
  if (!found) {
    if (role.password === undefined) {
      throw new AppRoleError(
        `the application's role ${role.name} does not exist: create it (CREATE ROLE ${client.escapeIdentifier(role.name)} ` +
          'LOGIN PASSWORD ...), or give its password in DATABASE_URL for the migration to create it',
      );
    }
    await client.query(
      `create role ${client.escapeIdentifier(role.name)} login password ${client.escapeLiteral(role.password)}`,
    );
    return;
  }
  if (found.self) {
    throw new AppRoleError(
      `the application's role ${role.name} is the role the migrations run as: give the application a role of its own`,
    );
  }
  if (found.superuser || found.bypassrls) {
    throw new AppRoleError(
      `the application's role ${role.name} is a ${found.superuser ? 'superuser' : 'role that bypasses row security'}: ` +
        'it could change or delete the audit log; connect the application as a plain login role',
    );
  }
  if (found.owns !== null) {
    throw new AppRoleError(
      `the application's role ${role.name} owns ${found.owns}, so it could alter or drop it: hand its objects to the ` +
        `migrating role first (REASSIGN OWNED BY ${client.escapeIdentifier(role.name)} TO CURRENT_USER, as that role)`,
    );
  }
}

/**
 * PostgreSQL 14 and earlier let every role create objects in `public`: the application's role could then create a
 * table or a function there, and own it. Refused, with the one statement that closes it (PostgreSQL 15's default).
 */
async function refuseCreateOnPublic(client: pg.Client, name: string): Promise<void> {
  const { rows } = await client.query<{ create: boolean }>(
    `select has_schema_privilege($1, 'public', 'CREATE') as create`,
    [name],
  );
  if (rows[0]?.create) {
    throw new AppRoleError(
      `the application's role ${name} may create objects in schema public: REVOKE CREATE ON SCHEMA public FROM ` +
        'PUBLIC (the default since PostgreSQL 15), or from whichever role granted it to the application',
    );
  }
}
