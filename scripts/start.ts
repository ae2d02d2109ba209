/**
 * `pnpm start`: the whole system on one machine, for trying it out and for development.
 *
 * - DATABASE_URL unset: starts an embedded PostgreSQL with its data under `.data/postgres` (kept across
 *   restarts, on a port derived from this checkout's path so two clones don't collide).
 * - Applies the migrations (Drizzle + pg-boss) as the role that owns the tables, and runs the apps as the
 *   application's role, which owns nothing (docs/deployment.md#database-roles): on the embedded PostgreSQL, its
 *   superuser and `webhook_inbox_app` (created by the migration, its password a dev secret); with DATABASE_URL,
 *   MIGRATION_DATABASE_URL's role when set (else DATABASE_URL's, which then owns the tables).
 * - Secrets unset (webhook secrets, ADMIN_TOKEN): generates dev secrets once, keeps them in
 *   `.data/dev-secrets.json`, and prints them, with the console's URL and its dev sign-in. A secret taken from
 *   the environment is never printed, nor the database URL's credentials.
 * - Writes `.data/runtime.json` (database, receiver and management URLs) for `pnpm inbox` while it runs.
 * - Runs the receiver and the worker as child processes (as they run in production) and forwards one
 *   SIGTERM to each on Ctrl-C/SIGTERM; when both have exited, stops PostgreSQL. A second signal kills.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appRoleOf, loadDotEnv, type AppRole } from '@webhook-inbox/db';
import { migrateExampleDatabase } from '@webhook-inbox/worker/migrations';
import { stablePortFor, startEmbeddedPostgres, type EmbeddedPostgres } from '@webhook-inbox/testing/embedded';
import { maskUrl } from '@webhook-inbox/env/mask';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
loadDotEnv();
// Dev-only override, used by the tests to keep their own data directory.
const dataDir = path.resolve(process.env.WEBHOOK_INBOX_DATA_DIR ?? path.join(root, '.data'));
const runtimeFile = path.join(dataDir, 'runtime.json');
const CHILD_STOP_TIMEOUT_MS = 20_000;

const log = (message: string) => process.stdout.write(`[start] ${message}\n`);

interface DevSecrets {
  stripe: string;
  shopify: string;
  /** ADMIN_TOKEN: the admin API's bearer token and the console's sign-in. */
  admin: string;
  /** The embedded PostgreSQL's application role's password. */
  database: string;
}

/** The role the apps connect to the embedded PostgreSQL as. */
const APP_ROLE = 'webhook_inbox_app';

/** The dev secrets kept in `.data/dev-secrets.json`; one missing from an older file is generated and added. */
async function devSecrets(): Promise<DevSecrets> {
  const file = path.join(dataDir, 'dev-secrets.json');
  const kept = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as Partial<DevSecrets>) : {};
  const secrets: DevSecrets = {
    stripe: kept.stripe ?? `whsec_${randomBytes(24).toString('base64')}`,
    shopify: kept.shopify ?? randomBytes(32).toString('hex'),
    admin: kept.admin ?? `dev_${randomBytes(24).toString('base64url')}`,
    database: kept.database ?? randomBytes(24).toString('hex'),
  };
  if (!kept.stripe || !kept.shopify || !kept.admin || !kept.database) {
    await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  return secrets;
}

interface DatabaseUrls {
  /** The owner's: the migrations run as its role. */
  migrationUrl: string;
  /** The application's: the apps and the CLI connect as its role. */
  databaseUrl: string;
  /** The application's role, to grant, when it is not the owner's. */
  appRole: AppRole | undefined;
}

/** A database of the operator's: one role for everything, or two with MIGRATION_DATABASE_URL. */
function givenDatabase(databaseUrl: string, migrationUrl: string | undefined): DatabaseUrls {
  if (!migrationUrl || migrationUrl === databaseUrl)
    return { migrationUrl: databaseUrl, databaseUrl, appRole: undefined };
  return { migrationUrl, databaseUrl, appRole: appRoleOf(migrationUrl, databaseUrl) };
}

/** The URL of `url`'s server and database, connecting as `role`. */
function asRole(url: string, role: Required<AppRole>): string {
  const parsed = new URL(url);
  parsed.username = role.name;
  parsed.password = role.password;
  return parsed.toString();
}

async function ensureDatabase(server: EmbeddedPostgres, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  return server.url(name);
}

function run(name: string, entry: string, env: NodeJS.ProcessEnv, nodeFlags: string[]): ChildProcess {
  // Own process group: a terminal's Ctrl-C reaches only this script, which then sends exactly one SIGTERM,
  // so each app gets one graceful shutdown instead of a SIGINT and a SIGTERM ("second signal: exit now").
  const child = spawn(process.execPath, [...nodeFlags, path.join(root, entry)], {
    env,
    stdio: 'inherit',
    detached: true,
  });
  child.on('error', (error) => log(`${name} failed to start: ${error.message}`));
  return child;
}

/** The `--flags` of `node ... src/server.ts` in a package's `start` script. */
async function startFlags(packageJson: string): Promise<string[]> {
  const { scripts } = JSON.parse(await readFile(packageJson, 'utf8')) as { scripts?: { start?: string } };
  return (scripts?.start ?? '').split(/\s+/).filter((word) => word.startsWith('--'));
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function main(): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const secrets = await devSecrets();
  let server: EmbeddedPostgres | undefined;
  let urls: DatabaseUrls;
  if (process.env.DATABASE_URL) {
    urls = givenDatabase(process.env.DATABASE_URL, process.env.MIGRATION_DATABASE_URL);
  } else {
    const port = await stablePortFor(dataDir);
    log(`starting embedded PostgreSQL on 127.0.0.1:${port} (data in ${path.join(dataDir, 'postgres')})`);
    server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'postgres'), port, persistent: true });
    const migrationUrl = await ensureDatabase(server, 'webhook_inbox');
    const appRole = { name: APP_ROLE, password: secrets.database };
    urls = { migrationUrl, databaseUrl: asRole(migrationUrl, appRole), appRole };
  }
  const { migrationUrl, databaseUrl, appRole } = urls;

  const children: ChildProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (code: number) =>
    (stopping ??= (async () => {
      for (const child of children) child.kill('SIGTERM');
      const timer = setTimeout(
        () => children.forEach((child) => child.kill('SIGKILL')),
        CHILD_STOP_TIMEOUT_MS,
      );
      await Promise.all(children.map(exited));
      clearTimeout(timer);
      await rm(runtimeFile, { force: true });
      if (server) {
        log('stopping PostgreSQL');
        await server.stop();
      }
      log('stopped');
      process.exit(code);
    })());
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      log(`${signal} again: killing`);
      children.forEach((child) => child.kill('SIGKILL'));
      return;
    }
    log(`${signal}: shutting down`);
    void stop(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  log(appRole ? `migrating (the apps connect as ${appRole.name})` : 'migrating');
  await migrateExampleDatabase(migrationUrl, appRole);

  // The owner's credential stays with this script: the apps get the application's.
  const { MIGRATION_DATABASE_URL: _owner, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    DATABASE_URL: databaseUrl,
    STRIPE_WEBHOOK_SECRET: process.env.STRIPE_WEBHOOK_SECRET || secrets.stripe,
    SHOPIFY_WEBHOOK_SECRET: process.env.SHOPIFY_WEBHOOK_SECRET || secrets.shopify,
    ADMIN_TOKEN: process.env.ADMIN_TOKEN || secrets.admin,
    MAIL_DIR: process.env.MAIL_DIR ?? path.join(dataDir, 'mail'),
  };
  const host = env.HOST ?? '127.0.0.1';
  const port = env.PORT ?? '3000';
  const managementUrl = `http://${env.MANAGEMENT_HOST ?? '127.0.0.1'}:${env.MANAGEMENT_PORT ?? '3002'}`;
  // The console is where the admin API is: the management listener unless ADMIN_LISTENER=public.
  const consoleUrl = `${env.ADMIN_LISTENER?.trim().toLowerCase() === 'public' ? `http://${host}:${port}` : managementUrl}/console/`;

  for (const [name, entry] of [
    ['receiver', 'apps/receiver/src/server.ts'],
    ['worker', 'apps/worker/src/server.ts'],
  ] as const) {
    // The same Node flags as the app's own `start` script (the receiver's caps V8's heap: less RSS).
    const nodeFlags = await startFlags(path.join(root, entry, '../../package.json'));
    if (!existsSync(path.join(root, entry))) {
      log(`${name}: ${entry} not found, not started`);
      continue;
    }
    const child = run(name, entry, env, nodeFlags);
    children.push(child);
    child.once('exit', (code, signal) => {
      if (stopping) return;
      log(`${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping everything`);
      void stop(1);
    });
  }

  // Lets `pnpm inbox` find this database and receiver without any configuration.
  await writeFile(
    runtimeFile,
    `${JSON.stringify({ pid: process.pid, databaseUrl, migrationDatabaseUrl: migrationUrl, receiverUrl: `http://${host}:${port}`, managementUrl }, null, 2)}\n`,
    {
      mode: 0o600,
    },
  );
  log(`receiver: http://${host}:${port}/webhooks/{stripe,shopify}`);
  log(`management: ${managementUrl}/{healthz,readyz,metrics,admin}`);
  for (const [name, generated] of [
    ['STRIPE_WEBHOOK_SECRET', secrets.stripe],
    ['SHOPIFY_WEBHOOK_SECRET', secrets.shopify],
    ['ADMIN_TOKEN', secrets.admin],
  ] as const) {
    log(process.env[name] ? `${name}: from the environment` : `${name}=${generated} (dev, generated)`);
  }
  log(
    `console: ${consoleUrl} (sign in with ${process.env.ADMIN_TOKEN ? 'your ADMIN_TOKEN' : `the dev token ${secrets.admin}`})`,
  );
  log(`DATABASE_URL=${maskUrl(databaseUrl)}`);
  log('try: pnpm inbox send stripe checkout.session.completed');
  log('ready (Ctrl-C to stop)');
  // With no app to run (only in a partial checkout), stay up until a signal, holding the database.
  if (children.length === 0) setInterval(() => {}, 1 << 30);
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
