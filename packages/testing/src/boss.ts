import { PgBoss } from 'pg-boss';

export interface TestBossOptions {
  /** Connections in its pool. Default 3. */
  max?: number;
  /** pg-boss's `error` events. Default: ignored (a test asserts on rows and jobs, not on pg-boss's logging). */
  onError?: (error: Error) => void;
  /** False: a worker polls, never LISTENs (the inbox's own setting, for a baseline that works as it does). */
  useListenNotify?: boolean;
}

/**
 * The pg-boss the tests and benchmarks send with, started. Sender settings, as the inbox's `createSenderBoss`:
 * no supervision, cron, migration or schema creation (the test database is migrated), no instance registration,
 * warnings table or spans. (Not `createSenderBoss` itself: the inbox's own tests import this package's root, which
 * loads nothing of the inbox.)
 *
 * @example
 * const boss = await startTestBoss(db.url);
 * await configureQueues(boss, settings);
 */
export async function startTestBoss(url: string, options: TestBossOptions = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    max: options.max ?? 3,
    supervise: false,
    schedule: false,
    migrate: false,
    createSchema: false,
    registerInstance: false,
    persistWarnings: false,
    openTelemetry: { enabled: false },
    ...(options.useListenNotify === undefined ? {} : { useListenNotify: options.useListenNotify }),
  });
  boss.on('error', options.onError ?? (() => {}));
  await boss.start();
  return boss;
}
