import { PgBoss } from 'pg-boss';
import { describeError } from './http-errors.ts';
import type { Logger } from './logger.ts';

/**
 * pg-boss as a sender only: no maintenance, scheduling, supervision, migration or instance heartbeat (the
 * worker does those), and a pool of two for start-up and its queue cache. `send()` never uses that pool: it
 * runs on the request transaction's connection.
 */
export function createSender(connectionString: string, logger: Logger): PgBoss {
  const boss = new PgBoss({
    connectionString,
    max: 2,
    application_name: 'webhook-inbox-receiver-boss',
    supervise: false,
    schedule: false,
    migrate: false,
    createSchema: false,
    registerInstance: false,
    persistWarnings: false,
    openTelemetry: { enabled: false },
  });
  boss.on('error', (error) => logger.error({ err: describeError(error) }, 'pg-boss error'));
  return boss;
}
