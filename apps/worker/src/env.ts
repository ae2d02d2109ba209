import path from 'node:path';
import type { QueueSettings } from '@webhook-inbox/inbox';
import {
  defaultAllowedHosts,
  parseHostList,
  type AllowedHosts,
} from '@webhook-inbox/operator/access/allowed-hosts';
import type { DestinationFailureRate } from '@webhook-inbox/operator/alerts';
import {
  DEFAULT_GROUP,
  GROUP_NAME_RULE,
  isGroupName,
  MIN_HEARTBEAT_SECONDS,
} from '@webhook-inbox/inbox/queue';
import {
  blankToUndefined as blank,
  boundedNumber,
  ConfigError,
  describeService,
  maskUrl,
  parseEnv,
  parsedBy,
  serviceConfig,
  SERVICE_VARIABLES,
  textOr,
  type ServiceConfig,
} from '@webhook-inbox/env';
import {
  DestinationsFileError,
  loadDestinationsFile,
  type Destination,
} from '@webhook-inbox/inbox/destinations';
import { z } from 'zod';

export { ConfigError, LOG_LEVELS, type LogLevel } from '@webhook-inbox/env';

/**
 * The worker's configuration, parsed once from the environment at start-up. Nothing else in the app reads
 * `process.env`: everything receives a `WorkerConfig`.
 */
export interface WorkerConfig extends ServiceConfig {
  host: string;
  /** `/healthz` and `/metrics`. 0: any free port (tests). */
  port: number;
  /**
   * The `Host` names `/metrics` answers (`WORKER_ALLOWED_HOSTS`): by default the loopback names and `WORKER_HOST`
   * when it is an address. Others get 421 `host_not_allowed`, so a DNS-rebinding page cannot read it.
   */
  allowedHosts: AllowedHosts;
  /** Unset: messages are written as `.eml` files under `mailDir`. */
  smtpUrl: string | undefined;
  mailFrom: string;
  mailDir: string;
  /**
   * The worker's consumer group (`WORKER_GROUP`): the team whose effects it runs. Every group with an effect for
   * an event's type gets the event, with its own queue, status, retries and dead letters. `default`: the single
   * worker's queue and `webhook_events.status`.
   */
  group: string;
  /** Retry policy of the events queue (the worker owns it and applies it at start). */
  queue: QueueSettings;
  batchSize: number;
  concurrency: number;
  poolSize: number;
  pollingIntervalSeconds: number;
  /** How often silent (heartbeat) and expired jobs are looked for and retried. */
  superviseIntervalSeconds: number;
  /**
   * Deadline for one statement of an effect or the ledger (PostgreSQL's statement_timeout; the connection is
   * given up 2 s later if it stops answering).
   */
  statementTimeoutMs: number;
  /** How long a shutdown waits for running effects before abandoning them (they are retried elsewhere). */
  shutdownTimeoutMs: number;
  /**
   * The destination alerts (docs/destinations.md#alerts): when a destination's failure rate alerts
   * (`ALERT_DESTINATION_*`), and how often the worker looks (10 s; tests look more often).
   */
  destinationAlerts: { failureRate: DestinationFailureRate; intervalMs: number };
  /** The retention purge's pg-boss schedule (payloads, then event keys, of finished events). */
  retention: { cron: string; payloadDays: number; keyDays: number; historyDays: number; auditDays: number };
  /** Stripe secret key for scheduled reconciliation; unset: reconciliation off. */
  stripeApiKey: string | undefined;
  reconcile: { cron: string; since: string };
  /**
   * The destinations file (`WEBHOOK_DESTINATIONS_FILE`, beside the sources file), read and validated here, once;
   * the worker delivers to those of its consumer group. Empty: no destinations.
   */
  destinations: readonly Destination[];
}

// The worker's numbers say "must be a number between <min> and <max>", whole or not.
const number = (min: number, max: number, fallback: number, { integer = true } = {}) =>
  boundedNumber(min, max, fallback, { integer, noun: 'a number' });

const bool = (fallback: boolean) =>
  z.preprocess(
    (value) => (typeof value === 'string' ? blank(value.trim().toLowerCase()) : value),
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
      .transform((value) => ['true', '1', 'yes'].includes(value))
      .default(fallback),
  );

const schema = z.object({
  ...SERVICE_VARIABLES,
  WORKER_HOST: textOr('127.0.0.1'),
  WORKER_PORT: number(0, 65_535, 3001),
  WORKER_ALLOWED_HOSTS: parsedBy(parseHostList),
  WORKER_GROUP: z.preprocess(
    (value) => (typeof value === 'string' ? blank(value.trim()) : value),
    z
      .string()
      .refine(isGroupName, { error: `must be a consumer group name: ${GROUP_NAME_RULE}` })
      .default(DEFAULT_GROUP),
  ),
  SMTP_URL: z.preprocess(
    blank,
    z
      .string()
      .trim()
      .refine((value) => /^smtps?:\/\/./.test(value), { error: 'must be an smtp:// or smtps:// URL' })
      .optional(),
  ),
  MAIL_FROM: textOr('welcome@localhost'),
  MAIL_DIR: textOr('.data/mail'),
  WORKER_RETRY_LIMIT: number(0, 1_000, 8),
  WORKER_RETRY_DELAY_SECONDS: number(0, 86_400, 5),
  WORKER_RETRY_BACKOFF: bool(true),
  WORKER_RETRY_DELAY_MAX_SECONDS: number(1, 7 * 86_400, 900),
  WORKER_JOB_TIMEOUT_SECONDS: number(1, 86_400, 300),
  // 0: off (the job timeout alone notices a dead worker); else pg-boss's floor of 10 s applies, checked below.
  WORKER_HEARTBEAT_SECONDS: number(0, 3_600, 10),
  WORKER_BATCH_SIZE: number(1, 1_000, 50),
  WORKER_CONCURRENCY: number(1, 64, 4),
  WORKER_POOL_SIZE: number(1, 500, 20),
  WORKER_POLL_SECONDS: number(0.5, 3_600, 0.5, { integer: false }),
  WORKER_SUPERVISE_SECONDS: number(1, 3_600, 5),
  WORKER_STATEMENT_TIMEOUT_MS: number(1_000, 3_600_000, 60_000),
  SHUTDOWN_TIMEOUT_MS: number(0, 600_000, 15_000),
  // A destination whose attempts of the last window failed at this percentage or more, of at least so many attempts.
  ALERT_DESTINATION_FAILURE_PERCENT: number(1, 100, 50),
  ALERT_DESTINATION_MIN_ATTEMPTS: number(1, 1_000_000, 10),
  ALERT_DESTINATION_WINDOW_SECONDS: number(10, 86_400, 300),
  // Never below 3, the providers' retry window: within it a dead event may still be replayed, which needs its
  // payload (the purge refuses less without `force`, which a schedule never sets).
  RETENTION_PAYLOAD_DAYS: number(3, 36_500, 30),
  // Never below 7: Stripe retries for 3 days and a Dashboard resend reaches back 15; a key purged while its
  // provider may still deliver it lets that delivery in as a new event.
  RETENTION_KEY_DAYS: number(7, 36_500, 90),
  // The console overview's per-minute history; it charts the last day.
  RETENTION_HISTORY_DAYS: number(1, 36_500, 30),
  RETENTION_AUDIT_DAYS: number(90, 36_500, 365),
  RETENTION_CRON: textOr('17 3 * * *'),
  STRIPE_API_KEY: z.preprocess(blank, z.string().trim().optional()),
  RECONCILE_CRON: textOr('*/30 * * * *'),
  RECONCILE_SINCE: textOr('3d'),
  WEBHOOK_DESTINATIONS_FILE: z.preprocess(blank, z.string().trim().optional()),
  INIT_CWD: z.string().optional(),
});

/** Every variable the worker reads (its schema's keys), for tests to walk. */
export const WORKER_VARIABLES: readonly string[] = Object.keys(schema.shape);

/**
 * Parses the worker's configuration; throws `ConfigError` listing every wrong variable. `server.ts` passes
 * `process.env` after reading `.env`; tests and the benchmark pass their own.
 */
export function parseConfig(env: Record<string, string | undefined> = process.env): WorkerConfig {
  const e = parseEnv(schema, env);
  const issues: string[] = [];
  if (e.WORKER_RETRY_BACKOFF && e.WORKER_RETRY_DELAY_MAX_SECONDS < e.WORKER_RETRY_DELAY_SECONDS) {
    issues.push('WORKER_RETRY_DELAY_MAX_SECONDS must be at least WORKER_RETRY_DELAY_SECONDS');
  }
  if (e.WORKER_HEARTBEAT_SECONDS > 0 && e.WORKER_HEARTBEAT_SECONDS < MIN_HEARTBEAT_SECONDS) {
    issues.push(`WORKER_HEARTBEAT_SECONDS must be 0 (off) or at least ${MIN_HEARTBEAT_SECONDS}`);
  }
  let destinations: Destination[] = [];
  if (e.WEBHOOK_DESTINATIONS_FILE) {
    const file = path.resolve(e.INIT_CWD ?? process.cwd(), e.WEBHOOK_DESTINATIONS_FILE);
    try {
      destinations = loadDestinationsFile(file);
    } catch (error) {
      if (!(error instanceof DestinationsFileError)) throw error;
      issues.push(...error.problems.map((problem) => `WEBHOOK_DESTINATIONS_FILE (${problem})`));
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);

  return {
    ...serviceConfig(e, env),
    host: e.WORKER_HOST,
    port: e.WORKER_PORT,
    allowedHosts: e.WORKER_ALLOWED_HOSTS ?? defaultAllowedHosts(e.WORKER_HOST),
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    // Relative to where pnpm was invoked (the repo root for `pnpm start`), not to apps/worker.
    mailDir: path.resolve(e.INIT_CWD ?? process.cwd(), e.MAIL_DIR),
    group: e.WORKER_GROUP,
    queue: {
      retryLimit: e.WORKER_RETRY_LIMIT,
      retryDelay: e.WORKER_RETRY_DELAY_SECONDS,
      retryBackoff: e.WORKER_RETRY_BACKOFF,
      retryDelayMax: e.WORKER_RETRY_DELAY_MAX_SECONDS,
      expireInSeconds: e.WORKER_JOB_TIMEOUT_SECONDS,
      heartbeatSeconds: e.WORKER_HEARTBEAT_SECONDS || null,
    },
    batchSize: e.WORKER_BATCH_SIZE,
    concurrency: e.WORKER_CONCURRENCY,
    poolSize: e.WORKER_POOL_SIZE,
    pollingIntervalSeconds: e.WORKER_POLL_SECONDS,
    superviseIntervalSeconds: e.WORKER_SUPERVISE_SECONDS,
    statementTimeoutMs: e.WORKER_STATEMENT_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    destinationAlerts: {
      failureRate: {
        threshold: e.ALERT_DESTINATION_FAILURE_PERCENT / 100,
        minAttempts: e.ALERT_DESTINATION_MIN_ATTEMPTS,
        windowMs: e.ALERT_DESTINATION_WINDOW_SECONDS * 1000,
      },
      intervalMs: 10_000,
    },
    retention: {
      cron: e.RETENTION_CRON,
      payloadDays: e.RETENTION_PAYLOAD_DAYS,
      keyDays: e.RETENTION_KEY_DAYS,
      historyDays: e.RETENTION_HISTORY_DAYS,
      auditDays: e.RETENTION_AUDIT_DAYS,
    },
    stripeApiKey: e.STRIPE_API_KEY,
    reconcile: { cron: e.RECONCILE_CRON, since: e.RECONCILE_SINCE },
    destinations,
  };
}

/** The configuration as it is safe to log: no credentials. */
export function describeConfig(config: WorkerConfig): Record<string, unknown> {
  return {
    host: config.host,
    port: config.port,
    allowedHosts: config.allowedHosts.entries,
    ...describeService(config),
    group: config.group,
    mail: config.smtpUrl ? maskUrl(config.smtpUrl) : `files in ${config.mailDir}`,
    queue: config.queue,
    batchSize: config.batchSize,
    concurrency: config.concurrency,
    poolSize: config.poolSize,
    statementTimeoutMs: config.statementTimeoutMs,
    retention: config.retention,
    reconciliation: config.stripeApiKey ? config.reconcile : 'off',
    // Names and origins only: a URL's path or query may carry a token.
    destinations: config.destinations.map((d) => `${d.name} (${d.group}) ${d.url.origin}`),
  };
}
