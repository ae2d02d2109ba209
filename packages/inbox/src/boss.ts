import { PgBoss } from 'pg-boss';

export interface SenderBossOptions {
  applicationName: string;
  onError?: (error: Error) => void;
  /** Run pg-boss's cron scheduler in this instance (the worker's operations do). Default false. */
  schedule?: boolean;
}

/**
 * pg-boss as a sender only (receiver, CLI): no maintenance, scheduling, supervision, migration or instance
 * heartbeat (the worker does those), and a pool of two for start-up and its queue cache. `ingest()` never sends
 * through that pool: it passes its own transaction's connection.
 */
export function createSenderBoss(connectionString: string, options: SenderBossOptions): PgBoss {
  const boss = new PgBoss({
    connectionString,
    max: 2,
    application_name: options.applicationName,
    supervise: false,
    schedule: options.schedule ?? false,
    migrate: false,
    createSchema: false,
    registerInstance: false,
    persistWarnings: false,
    openTelemetry: { enabled: false },
  });
  boss.on('error', options.onError ?? (() => {}));
  return boss;
}
