import {
  createProviders,
  parseStandardWebhooksEnv,
  type SourceDefinition,
  type StandardWebhooksSender,
} from '@webhook-inbox/providers';
import {
  blankToUndefined,
  boundedNumber,
  ConfigError,
  describeService,
  parseEnv,
  parsedBy,
  serviceConfig,
  SERVICE_VARIABLES,
  textOr,
  type ServiceConfig,
} from '@webhook-inbox/env';
import { DEFAULT_GROUP_COMMIT } from '@webhook-inbox/inbox/group-commit';
import { caselessIdProviders } from '@webhook-inbox/providers/subject';
import {
  NO_TRUSTED_PROXIES,
  parseTrustedProxies,
  type TrustedProxies,
} from '@webhook-inbox/operator/access/forwarded';
import { z } from 'zod';
import {
  defaultAllowedHosts,
  parseHostList,
  type AllowedHosts,
} from '@webhook-inbox/operator/access/allowed-hosts';
import {
  CONSOLE_VARIABLES,
  describeConsoleConfig,
  parseConsoleConfig,
  type ConsoleConfig,
} from './console.ts';
import { batchFields, batchLimits, type BatchLimits } from './batch.ts';
import { readSources } from './sources.ts';
import {
  catalogueEntryOf,
  catalogueSchema,
  catalogueSources,
  secretList,
  withSecretFiles,
} from './secrets.ts';

export { ConfigError, LOG_LEVELS, type LogLevel } from '@webhook-inbox/env';

/**
 * The receiver's configuration, parsed once from the environment at start-up. Nothing else in the app reads
 * `process.env`: everything below receives a `ReceiverConfig`.
 */
export interface ReceiverConfig extends ServiceConfig {
  /** The public listener: the webhooks and a database-free `/healthz`. */
  host: string;
  port: number;
  /** The management listener: `/healthz`, `/readyz`, `/metrics`, and the admin API by default. */
  managementHost: string;
  managementPort: number;
  /**
   * The `Host` names the management listener answers (`/healthz` and `/readyz` answer any): the loopback names and
   * `MANAGEMENT_HOST` unless `MANAGEMENT_ALLOWED_HOSTS` lists others.
   */
  managementAllowedHosts: AllowedHosts;
  /** Peers whose forwarding headers give the client's address and scheme (`TRUSTED_PROXIES`); empty: none. */
  trustedProxies: TrustedProxies;
  /** Which listener serves `/admin/*`. */
  adminListener: AdminListener;
  /** Connections the public listener holds at once; more are closed as they arrive. */
  maxConnections: number;
  /** Deadline for a request's headers (Node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** Deadline for a whole request, headers and body (Node's `requestTimeout`: a bare 408, the last resort). */
  requestTimeoutMs: number;
  /** Deadline for a webhook's body, from its first read (408 `body_timeout`). */
  bodyTimeoutMs: number;
  /** Bytes all webhook bodies being received and handled may hold together (503 `unavailable` past it). */
  bodyBudgetBytes: number;
  /**
   * When the budget is full, the oldest bodies still arriving (for at least this long) are cut off (503) to
   * make room for a new one.
   */
  bodyEvictAfterMs: number;
  /** Stripe endpoint secrets (`whsec_...`); more than one during a rotation. Empty: no Stripe endpoint. */
  stripeSecrets: string[];
  /** Shopify app client secrets; more than one during a rotation. Empty: no Shopify endpoint. */
  shopifySecrets: string[];
  /** Standard Webhooks senders (`STANDARD_WEBHOOKS=name=whsec_a|whsec_b,other=whsec_c`), each at `/webhooks/<name>`. */
  standardWebhooks: StandardWebhooksSender[];
  /** The sources file (`WEBHOOK_SOURCES_FILE`), when one is configured. */
  sourcesFile: string | undefined;
  /**
   * The sources the catalogue variables (`GITHUB_WEBHOOK_SECRET`) and the file declare, each at `/webhooks/<name>`
   * (docs/sources.md).
   */
  sources: SourceDefinition[];
  /** The provider names whose event ids the id search matches in any case (`caselessIdProviders` of the sources). */
  caselessIdProviders: readonly string[];
  toleranceSeconds: number;
  maxBodyBytes: number;
  /** A batching source's limits: items per request, body bytes (batch-env.ts). */
  batch: BatchLimits;
  /** Connections the request path may hold at once. */
  poolSize: number;
  /** Group commit: transactions recording events at once (at most `poolSize`). */
  groupCommitTransactions: number;
  /** Group commit: events in one transaction at most (1: one transaction per event). */
  groupCommitMaxBatch: number;
  /**
   * Deadline for one database round trip on the request path, and for getting a connection: a database that
   * stops answering turns into 503s (the sender retries) instead of requests that hang.
   */
  databaseTimeoutMs: number;
  /** How long a shutdown waits for in-flight requests before cutting them off. */
  shutdownTimeoutMs: number;
  /** Bearer token for `/admin/*` and the console's break-glass sign-in; unset: the admin API does not exist. */
  adminToken: string | undefined;
  /** The console's single sign-on and session key (console-env.ts). */
  console: ConsoleConfig;
  /** Refused signatures per provider per minute above which an alert fires (a rotated secret not deployed). */
  signatureFailureThreshold: number;
}

// Whole numbers only: "must be a whole number between <min> and <max>".
const integer = (min: number, max: number, fallback: number) => boundedNumber(min, max, fallback);

// Parsed by the providers' own parser, so the receiver and the registry agree on the format.
const standardWebhooks = parsedBy(parseStandardWebhooksEnv, 'STANDARD_WEBHOOKS ');

const ADMIN_LISTENERS = ['management', 'public'] as const;
type AdminListener = (typeof ADMIN_LISTENERS)[number];

const MIB = 1024 * 1024;

const schema = z.object({
  ...SERVICE_VARIABLES,
  HOST: textOr('127.0.0.1'),
  PORT: integer(0, 65_535, 3000),
  MANAGEMENT_HOST: textOr('127.0.0.1'),
  MANAGEMENT_PORT: integer(0, 65_535, 3002),
  MANAGEMENT_ALLOWED_HOSTS: parsedBy(parseHostList),
  TRUSTED_PROXIES: parsedBy(parseTrustedProxies),
  ADMIN_LISTENER: z.preprocess(
    (value) => (typeof value === 'string' ? blankToUndefined(value.trim().toLowerCase()) : value),
    z.enum(ADMIN_LISTENERS, { error: `must be one of ${ADMIN_LISTENERS.join(', ')}` }).default('management'),
  ),
  MAX_CONNECTIONS: integer(1, 1_000_000, 1_024),
  HEADERS_TIMEOUT_MS: integer(1_000, 600_000, 10_000),
  REQUEST_TIMEOUT_MS: integer(1_000, 3_600_000, 30_000),
  WEBHOOK_BODY_TIMEOUT_MS: integer(100, 3_600_000, 10_000),
  WEBHOOK_BODY_BUDGET_BYTES: integer(1, 4_096 * MIB, 32 * MIB),
  WEBHOOK_BODY_EVICT_AFTER_MS: integer(0, 3_600_000, 0),
  STRIPE_WEBHOOK_SECRET: secretList,
  SHOPIFY_WEBHOOK_SECRET: secretList,
  STANDARD_WEBHOOKS: standardWebhooks,
  WEBHOOK_SOURCES_FILE: z.preprocess(blankToUndefined, z.string().trim().optional()),
  WEBHOOK_TOLERANCE_SECONDS: integer(1, 86_400, 300),
  WEBHOOK_MAX_BODY_BYTES: integer(1, 64 * 1024 * 1024, 1_048_576),
  ...batchFields,
  DATABASE_POOL_SIZE: integer(1, 200, 16),
  // Unset (0): the group-commit default, or the pool's size when that is smaller.
  GROUP_COMMIT_TRANSACTIONS: integer(1, 200, 0),
  GROUP_COMMIT_MAX_BATCH: integer(1, 1_000, DEFAULT_GROUP_COMMIT.maxBatch),
  DATABASE_TIMEOUT_MS: integer(100, 60_000, 5_000),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000, 10_000),
  // Long enough not to be guessed; the admin API can replay events.
  ADMIN_TOKEN: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .min(16, { error: 'must be at least 16 characters' })
      .regex(/^[A-Za-z0-9._~+/-]+=*$/, {
        error: 'may contain only letters, digits and . _ ~ + / - (then = padding), as a bearer token does',
      })
      .optional(),
  ),
  ALERT_SIGNATURE_FAILURES_PER_MINUTE: integer(1, 1_000_000, 20),
});

/** Every variable the receiver reads (its schemas' keys; each secret also as `<NAME>_FILE`), for tests to walk. */
export const RECEIVER_VARIABLES: readonly string[] = [
  ...Object.keys(schema.shape),
  ...Object.keys(catalogueSchema.shape),
  ...CONSOLE_VARIABLES,
];

/**
 * Parses the receiver's configuration; throws `ConfigError` listing every wrong variable. Pass the environment
 * explicitly (tests, `startReceiver`); `server.ts` passes `process.env` after reading `.env`.
 */
export function parseConfig(environment: Record<string, string | undefined> = process.env): ReceiverConfig {
  const issues: string[] = [];
  const env = withSecretFiles(environment, issues);
  const consoleConfig = parseConsoleConfig(env, issues);
  let e: z.output<typeof schema>;
  let catalogueEnv: Record<string, string[] | string | undefined> = {};
  try {
    catalogueEnv = parseEnv(catalogueSchema, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.push(...error.issues);
  }
  try {
    e = parseEnv(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError([...issues, ...error.issues]);
    throw error;
  }
  const service = serviceConfig(e, env);
  const { production } = service;
  const envSources = catalogueSources(catalogueEnv);
  // A sources file or a catalogue variable says which endpoints exist; without either, production needs both
  // built-in secrets.
  if (production && e.WEBHOOK_SOURCES_FILE === undefined && envSources.length === 0) {
    for (const name of ['STRIPE_WEBHOOK_SECRET', 'SHOPIFY_WEBHOOK_SECRET'] as const) {
      if (e[name].length === 0) issues.push(`${name} is required when NODE_ENV=production`);
    }
  }
  // Build each provider once here so a malformed secret is reported against its variable (exit 2), not as a
  // crash at start-up. The providers' messages name a secret by position, never by value.
  const toleranceSeconds = e.WEBHOOK_TOLERANCE_SECONDS;
  const checks = [
    ['STRIPE_WEBHOOK_SECRET', { stripeSecrets: e.STRIPE_WEBHOOK_SECRET, toleranceSeconds }],
    ['SHOPIFY_WEBHOOK_SECRET', { shopifySecrets: e.SHOPIFY_WEBHOOK_SECRET, toleranceSeconds }],
    ['STANDARD_WEBHOOKS', { standardWebhooks: e.STANDARD_WEBHOOKS ?? [], toleranceSeconds }],
  ] as const;
  for (const [name, providersConfig] of checks) {
    try {
      createProviders(providersConfig);
    } catch (error) {
      issues.push(`${name} ${(error as Error).message}`);
    }
  }
  for (const source of envSources) {
    try {
      createProviders({ sources: [source], toleranceSeconds });
    } catch (error) {
      const message = (error as Error).message.replace(`source "${source.name}": `, '');
      issues.push(`${catalogueEntryOf(source).envVar} ${message}`);
    }
  }
  const fileSources = readSources(e.WEBHOOK_SOURCES_FILE, issues);
  for (const source of fileSources) {
    const twin = envSources.find((candidate) => candidate.name === source.name);
    if (twin !== undefined) {
      issues.push(
        `${catalogueEntryOf(twin).envVar} and source "${source.name}" of WEBHOOK_SOURCES_FILE both declare ` +
          `/webhooks/${source.name}; keep one (or give the file's source another name)`,
      );
    }
  }
  const sources = [...envSources, ...fileSources];
  if (issues.length === 0 && sources.length > 0) {
    try {
      createProviders({
        stripeSecrets: e.STRIPE_WEBHOOK_SECRET,
        shopifySecrets: e.SHOPIFY_WEBHOOK_SECRET,
        standardWebhooks: e.STANDARD_WEBHOOKS,
        sources,
        toleranceSeconds,
      });
    } catch (error) {
      issues.push(`WEBHOOK_SOURCES_FILE (${e.WEBHOOK_SOURCES_FILE}): ${(error as Error).message}`);
    }
  }
  // A single body within the per-request limit must always fit an empty budget: past the budget is a 503,
  // which the sender retries, so it must be a "not now", never a "never".
  if (e.WEBHOOK_BODY_BUDGET_BYTES < e.WEBHOOK_MAX_BODY_BYTES) {
    issues.push('WEBHOOK_BODY_BUDGET_BYTES must be at least WEBHOOK_MAX_BODY_BYTES');
  }
  if (e.HEADERS_TIMEOUT_MS > e.REQUEST_TIMEOUT_MS) {
    issues.push('HEADERS_TIMEOUT_MS must be at most REQUEST_TIMEOUT_MS');
  }
  // The receiver's own 408 (with its error code) comes first; Node's bare one is the last resort.
  if (e.WEBHOOK_BODY_TIMEOUT_MS >= e.REQUEST_TIMEOUT_MS) {
    issues.push('WEBHOOK_BODY_TIMEOUT_MS must be less than REQUEST_TIMEOUT_MS');
  }
  // Each transaction holds a request-path connection; the admin API needs one too at times.
  if (e.GROUP_COMMIT_TRANSACTIONS > e.DATABASE_POOL_SIZE) {
    issues.push('GROUP_COMMIT_TRANSACTIONS must be at most DATABASE_POOL_SIZE');
  }
  if (e.MANAGEMENT_PORT !== 0 && e.MANAGEMENT_PORT === e.PORT) {
    issues.push('MANAGEMENT_PORT must differ from PORT');
  }
  const batch = batchLimits(e, issues);
  if (issues.length > 0) throw new ConfigError(issues);

  return {
    ...service,
    host: e.HOST,
    port: e.PORT,
    managementHost: e.MANAGEMENT_HOST,
    managementPort: e.MANAGEMENT_PORT,
    managementAllowedHosts: e.MANAGEMENT_ALLOWED_HOSTS ?? defaultAllowedHosts(e.MANAGEMENT_HOST),
    trustedProxies: e.TRUSTED_PROXIES ?? NO_TRUSTED_PROXIES,
    adminListener: e.ADMIN_LISTENER,
    maxConnections: e.MAX_CONNECTIONS,
    headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    bodyTimeoutMs: e.WEBHOOK_BODY_TIMEOUT_MS,
    bodyBudgetBytes: e.WEBHOOK_BODY_BUDGET_BYTES,
    bodyEvictAfterMs: e.WEBHOOK_BODY_EVICT_AFTER_MS,
    stripeSecrets: e.STRIPE_WEBHOOK_SECRET,
    shopifySecrets: e.SHOPIFY_WEBHOOK_SECRET,
    standardWebhooks: e.STANDARD_WEBHOOKS ?? [],
    sourcesFile: e.WEBHOOK_SOURCES_FILE,
    sources,
    caselessIdProviders: caselessIdProviders(sources),
    toleranceSeconds: e.WEBHOOK_TOLERANCE_SECONDS,
    maxBodyBytes: e.WEBHOOK_MAX_BODY_BYTES,
    batch,
    poolSize: e.DATABASE_POOL_SIZE,
    groupCommitTransactions:
      e.GROUP_COMMIT_TRANSACTIONS || Math.min(DEFAULT_GROUP_COMMIT.maxTransactions, e.DATABASE_POOL_SIZE),
    groupCommitMaxBatch: e.GROUP_COMMIT_MAX_BATCH,
    databaseTimeoutMs: e.DATABASE_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    adminToken: e.ADMIN_TOKEN,
    console: consoleConfig,
    signatureFailureThreshold: e.ALERT_SIGNATURE_FAILURES_PER_MINUTE,
  };
}

/** The configuration as it is safe to log: which secrets are configured, never their values. */
export function describeConfig(config: ReceiverConfig): Record<string, unknown> {
  return {
    host: config.host,
    port: config.port,
    management: {
      host: config.managementHost,
      port: config.managementPort,
      allowedHosts: config.managementAllowedHosts.entries,
    },
    trustedProxies: config.trustedProxies.entries,
    adminListener: config.adminListener,
    maxConnections: config.maxConnections,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    bodyBudgetBytes: config.bodyBudgetBytes,
    bodyEvictAfterMs: config.bodyEvictAfterMs,
    ...describeService(config),
    stripeSecrets: config.stripeSecrets.length,
    shopifySecrets: config.shopifySecrets.length,
    standardWebhooks: Object.fromEntries(
      config.standardWebhooks.map(({ name, secrets }) => [name, secrets.length]),
    ),
    sources: Object.fromEntries(
      config.sources.map(({ name, type, secrets }) => [name, { type, secrets: secrets.length }]),
    ),
    toleranceSeconds: config.toleranceSeconds,
    maxBodyBytes: config.maxBodyBytes,
    batch: config.batch,
    poolSize: config.poolSize,
    groupCommitTransactions: config.groupCommitTransactions,
    groupCommitMaxBatch: config.groupCommitMaxBatch,
    databaseTimeoutMs: config.databaseTimeoutMs,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    adminApi: config.adminToken ? 'enabled' : 'disabled',
    console: describeConsoleConfig(config.console),
    signatureFailureThreshold: config.signatureFailureThreshold,
    production: config.production,
  };
}
