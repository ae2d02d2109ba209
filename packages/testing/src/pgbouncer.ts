import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { findFreePort } from './embedded-postgres.ts';
import { requireTool } from './tools.ts';

/** Debian's package path; PGBOUNCER_BIN overrides it. */
const DEFAULT_BIN = '/usr/sbin/pgbouncer';

export interface PgBouncer {
  readonly port: number;
  /** `url` (a connection string to the server behind it) with its host and port replaced by the pooler's. */
  url(serverUrl: string): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Any connection string to the PostgreSQL server to pool (its host, port, user and password are used). */
  serverUrl: string;
  /** `transaction` unless told: the mode of the managed poolers (RDS Proxy, Supabase) our users run behind. */
  poolMode?: 'transaction' | 'session';
  /** Server connections per (database, user): small, so tests see clients share them. */
  poolSize?: number;
  maxClientConnections?: number;
}

/** Whether this machine has PgBouncer (CI installs Debian's package). */
export function pgbouncerAvailable(): boolean {
  return existsSync(process.env.PGBOUNCER_BIN ?? DEFAULT_BIN);
}

/** Whether a suite behind PgBouncer runs: `requireTool` for PgBouncer (fails under CI=true when it is missing). */
export function requirePgBouncer(): boolean {
  return requireTool('pgbouncer', pgbouncerAvailable(), `apt-get install pgbouncer, or PGBOUNCER_BIN=<path>`);
}

/**
 * Starts PgBouncer in front of `serverUrl` on a free loopback port, in transaction mode unless told, and waits
 * until it answers a query. Every database of the server is reachable through it (`* =` in `[databases]`).
 * PgBouncer refuses to run as root: as root it runs as `nobody`, with its files readable by that user.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const server = new URL(options.serverUrl);
  const port = await findFreePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-inbox-pgbouncer-'));
  chmodSync(dir, 0o755);
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432} user=${decodeURIComponent(server.username)} password=${decodeURIComponent(server.password)}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      // Loopback tests only: clients are not authenticated; PgBouncer logs in to the server as configured above.
      'auth_type = any',
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.poolSize ?? 20}`,
      `max_client_conn = ${options.maxClientConnections ?? 500}`,
      'unix_socket_dir =',
      'server_reset_query =',
      'ignore_startup_parameters = extra_float_digits',
      // After a failed server login PgBouncer waits this long before it tries again, and answers every query
      // meanwhile with an error: its default (15 s) stretches a 2 s database restart past a job's expiry.
      'server_login_retry = 1',
      '',
    ].join('\n'),
  );
  chmodSync(ini, 0o644);

  const bin = process.env.PGBOUNCER_BIN ?? DEFAULT_BIN;
  const args = process.getuid?.() === 0 ? ['-u', 'nobody', ini] : [ini];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });

  const url = (serverUrl: string) => {
    const through = new URL(serverUrl);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    return through.toString();
  };
  try {
    await waitUntilServing(url(options.serverUrl), () => exited);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PgBouncer did not start: ${output.join('').trim()}`, { cause: error });
  }
  return {
    port,
    url,
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilServing(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      if (exited() || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
