import type pg from 'pg';
import { PgBoss, type ConstructorOptions } from 'pg-boss';

/**
 * Options every pg-boss instance of ours passes through to its `pg.Pool` (pg-boss hands its options to pg):
 * TCP keepalive on its connections, as on our own pools, so a connection through a NAT or to a vanished peer
 * fails instead of hanging a fetch or a completion.
 */
export const BOSS_POOL_OPTIONS: Pick<pg.PoolConfig, 'keepAlive' | 'keepAliveInitialDelayMillis'> = {
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
};

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
  const config: ConstructorOptions = {
    ...BOSS_POOL_OPTIONS,
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
  };
  const boss = new PgBoss(config);
  boss.on('error', options.onError ?? (() => {}));
  return boss;
}
