// Shared by the ops tests only (not exported by the package).
import pg from 'pg';
import { startTestBoss, useStarted, useTestDatabase } from '@webhook-inbox/testing';
import type { PgBoss } from 'pg-boss';
import pino from 'pino';
import { ensureQueues } from '@webhook-inbox/inbox/queue';

export interface OpsTestDeps {
  pool: pg.Pool;
  boss: PgBoss;
  close(): Promise<void>;
}

/** A pool and a started pg-boss (no supervision, no cron pass) with the event queues, on a test database. */
export async function openDeps(url: string, pool: pg.PoolConfig = {}): Promise<OpsTestDeps> {
  const db = new pg.Pool({ connectionString: url, max: 6, ...pool });
  db.on('error', () => {});
  const boss = await startTestBoss(url);
  await ensureQueues(boss);
  return {
    pool: db,
    boss,
    close: async () => {
      await boss.stop({ graceful: false, close: true });
      await db.end();
    },
  };
}

/**
 * The test file's database and its ops dependencies, opened before the file's tests and closed after them. Call at
 * the top level of a test file; read `deps` inside tests only.
 */
export function useOpsDeps(): {
  readonly db: ReturnType<typeof useTestDatabase>;
  readonly deps: OpsTestDeps;
} {
  const db = useTestDatabase();
  const opened = useStarted(
    'the ops deps',
    () => openDeps(db.url),
    (deps) => deps.close(),
  );
  return {
    db,
    get deps(): OpsTestDeps {
      return opened.value;
    },
  };
}

export const silentLogger = pino({ level: 'silent' });
