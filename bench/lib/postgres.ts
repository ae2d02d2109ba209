import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrateExampleDatabase } from '../../apps/worker/src/migrations.ts';
import { createPool } from '../../packages/db/src/index.ts';
import { findFreePort, startEmbeddedPostgres } from '../../packages/testing/src/embedded-postgres.ts';

export interface BenchPostgres {
  /** A new, migrated database on the benchmark server; each benchmark takes its own. */
  database(name: string): Promise<string>;
  readonly durable: boolean;
  /** The server's data directory. */
  readonly dataDir: string;
  /** The postmaster's process id (its backends are its children), to account PostgreSQL's CPU time. */
  postmasterPid(): number;
  stop(): Promise<void>;
}

/**
 * A fresh embedded PostgreSQL in a throwaway directory. `durable` keeps the production settings (fsync and
 * synchronous commit on: every commit waits for the WAL flush); off trades them away as the test cluster does.
 */
export async function startBenchPostgres(options: {
  durable: boolean;
  /** More server settings (`-c name=value`), as `startEmbeddedPostgres` takes them. */
  settings?: Record<string, string>;
}): Promise<BenchPostgres> {
  const dataDir = path.join(
    os.tmpdir(),
    `webhook-inbox-bench-pg-${process.pid}-${randomBytes(3).toString('hex')}`,
  );
  const server = await startEmbeddedPostgres({
    dataDir,
    port: await findFreePort(),
    persistent: false,
    unsafeFast: !options.durable,
    maxConnections: 300,
    settings: options.settings,
  });
  return {
    durable: options.durable,
    dataDir,
    postmasterPid: () => Number.parseInt(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8'), 10),
    async database(name: string) {
      const admin = createPool({ connectionString: server.url(), max: 1 });
      try {
        await admin.query(`create database ${name}`);
      } finally {
        await admin.end();
      }
      const url = server.url(name);
      await migrateExampleDatabase(url);
      return url;
    },
    async stop() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
