import type pg from 'pg';
import { PgBoss, type ConstructorOptions } from 'pg-boss';
import { tracingInstalled } from './telemetry.ts';

/**
 * Options every pg-boss instance of ours passes through to its `pg.Pool` (pg-boss hands its options to pg):
 * TCP keepalive on its connections, as on our own pools, so a connection through a NAT or to a vanished peer
 * fails instead of hanging a fetch or a completion.
 */
export const BOSS_POOL_OPTIONS: Pick<pg.PoolConfig, 'keepAlive' | 'keepAliveInitialDelayMillis'> = {
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
};

export interface BossOptions {
  applicationName: string;
  onError?: (error: Error) => void;
}

/**
 * The options both factories below share: a pool of two, and none of the work that belongs to the inbox worker's
 * own pg-boss (`createInbox().start()`): no maintenance or supervision (expiring, retrying and archiving jobs of
 * every queue), no migration, no instance heartbeat.
 */
function auxiliaryBoss(
  connectionString: string,
  options: BossOptions,
  role: { schedule: boolean; spans: boolean },
): PgBoss {
  const config: ConstructorOptions = {
    ...BOSS_POOL_OPTIONS,
    connectionString,
    max: 2,
    application_name: options.applicationName,
    supervise: false,
    schedule: role.schedule,
    migrate: false,
    createSchema: false,
    registerInstance: false,
    persistWarnings: false,
    // pg-boss's own spans (send, process, settle) when tracing is on and the role wants them.
    openTelemetry: { enabled: role.spans && tracingInstalled() },
  };
  const boss = new PgBoss(config);
  boss.on('error', options.onError ?? (() => {}));
  return boss;
}

/**
 * pg-boss as a sender only (receiver, CLI): it sends jobs and nothing else, no cron scheduler. Its pool serves
 * start-up and its queue cache; `ingest()` and `replayEvent()` never send through it: they pass their own
 * transaction's connection. It makes no spans: the receiver's job inserts are one per group-commit transaction,
 * shared by the traces of all its requests, and each request's ingest span already covers it; the trace a job
 * carries is the inbox's own (`jobTraceContext`).
 */
export function createSenderBoss(connectionString: string, options: BossOptions): PgBoss {
  return auxiliaryBoss(connectionString, options, { schedule: false, spans: false });
}

/**
 * pg-boss for the worker's operations (retention purge, Stripe reconciliation): it runs pg-boss's cron
 * scheduler (`schedule`; of all instances, the one holding pg-boss's schedule lock sends each occurrence's job),
 * works the operations' queues (`work`) and sends the jobs a reconciliation ingests. Supervision of those queues
 * is left to the inbox worker's pg-boss, as for the rest.
 */
export function createOperationsBoss(connectionString: string, options: BossOptions): PgBoss {
  return auxiliaryBoss(connectionString, options, { schedule: true, spans: true });
}
