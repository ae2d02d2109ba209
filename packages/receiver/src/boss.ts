import { createSenderBoss } from '@webhook-inbox/inbox/boss';
import type { PgBoss } from 'pg-boss';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import type { Logger } from './logger.ts';

/**
 * pg-boss as a sender only (no maintenance, scheduling or migration; the worker does those). `send()` never
 * uses its pool: it runs on the request transaction's connection.
 */
export function createSender(connectionString: string, logger: Logger): PgBoss {
  return createSenderBoss(connectionString, {
    applicationName: 'webhook-inbox-receiver-boss',
    onError: (error) => logger.error({ err: errorFields(error) }, 'pg-boss error'),
  });
}
