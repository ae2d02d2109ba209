import type { Server, ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { clientClassFor } from '@webhook-inbox/db';
import { startingLogger } from '@webhook-inbox/env/logger';
import { createProviders, type CertificateFetch } from '@webhook-inbox/providers';
import { ensureQueues } from '@webhook-inbox/inbox/queue';
import { tracingInstalled } from '@webhook-inbox/inbox/telemetry';
import pg from 'pg';
import {
  createRecordedAlerter,
  createSignatureFailureMonitor,
  registerAlertMetrics,
} from '@webhook-inbox/operator/alerts';
import { createAdminAccess } from './admin/access.ts';
import { LOOPBACK_HOSTS } from '@webhook-inbox/operator/access/allowed-hosts';
import { createApp } from './ingress/app.ts';
import { createBodyBudget } from './ingress/body-budget.ts';
import { createDeliveryCounter } from './ingress/delivery-counts.ts';
import { startInboxSampler } from './management/inbox-sampler.ts';
import { createReceiverConsole } from './management/console.ts';
import { createSender } from './boss.ts';
import { describeConfig, type ReceiverConfig } from './config/env.ts';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { createLogger, createLogSampler, type Logger } from './logger.ts';
import { createManagementApp } from './management/app.ts';
import { createMetrics } from './management/metrics.ts';

export interface Receiver {
  /** The public listener, e.g. `http://127.0.0.1:3000` (the real port when `config.port` was 0). */
  readonly url: string;
  /**
   * The management listener (`/healthz`, `/readyz`, `/metrics`, admin API and console at `/console`), e.g.
   * `http://127.0.0.1:3002`.
   */
  readonly managementUrl: string;
  /**
   * Graceful stop, once: `/readyz` turns 503, the public listener refuses new connections and lets in-flight
   * requests finish (up to `config.shutdownTimeoutMs`, then cuts them off), then the management listener
   * closes, pg-boss stops and the pool closes. Idempotent.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /**
   * How AWS SNS and PayPal sources fetch the signing certificate a message names (after its host passed their
   * allow-list); unset: the global fetch. Tests serve certificates from a loopback server through it.
   */
  certificateFetch?: CertificateFetch;
}

/**
 * Starts the receiver in this process: its pool, a send-only pg-boss, the public and management listeners.
 * Requires a migrated database (`pnpm db:migrate`): it creates the queues but never the schema.
 *
 * @example
 * const receiver = await startReceiver(parseConfig(process.env));
 * console.log(receiver.url);
 * await receiver.close();
 */
export async function startReceiver(config: ReceiverConfig, options: StartOptions = {}): Promise<Receiver> {
  const logger = startingLogger(
    'receiver',
    options.logger,
    () => createLogger(config.logLevel),
    describeConfig(config),
  );
  const providers = createProviders({
    stripeSecrets: config.stripeSecrets,
    shopifySecrets: config.shopifySecrets,
    standardWebhooks: config.standardWebhooks,
    sources: config.sources,
    toleranceSeconds: config.toleranceSeconds,
    certificateFetch: options.certificateFetch,
  });
  if (providers.size === 0)
    logger.warn('no provider has a secret configured: every webhook will be refused (404)');
  const loopbackOnly = config.managementAllowedHosts.entries.every((host) =>
    (LOOPBACK_HOSTS as readonly string[]).includes(host),
  );
  if (['0.0.0.0', '::'].includes(config.managementHost) && loopbackOnly) {
    logger.warn(
      { allowedHosts: config.managementAllowedHosts.entries },
      'the management listener is on every interface but answers /metrics, the admin API and the console only ' +
        'for these Host names: list the names scrapers use in MANAGEMENT_ALLOWED_HOSTS',
    );
  }

  const pool = createRequestPool(config, logger);
  const boss = createSender(config.databaseUrl, logger);

  try {
    await boss.start();
    await ensureQueues(boss);
  } catch (error) {
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await pool.end().catch(() => {});
    throw new Error(
      'cannot start: the database is unreachable or not migrated (run `pnpm db:migrate` against DATABASE_URL)',
      { cause: error },
    );
  }

  let shuttingDown = false;
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const bodyBudget = createBodyBudget({
    limitBytes: config.bodyBudgetBytes,
    evictAfterMs: config.bodyEvictAfterMs,
  });
  const metrics = createMetrics(pool, { inFlight: () => inFlight, bodyBytes: () => bodyBudget.usedBytes() });
  const logSampler = createLogSampler(logger);
  // The admin API's throttle, the client address behind TRUSTED_PROXIES, its refusals' log (one line a minute).
  const adminAccess = createAdminAccess({ pool, logger, trustedProxies: config.trustedProxies });
  // The console overview's history: counts written every few seconds and a sample a minute, off the request path.
  const deliveryCounter = createDeliveryCounter({ pool, logger });
  const inboxSampler = startInboxSampler({ pool, logger });
  // Alerts never block a request: notify() only buffers; delivery, grouping and retries happen aside.
  // Each message is also recorded in alerts_sent (the console's alerts page), after its delivery.
  const alerter = createRecordedAlerter(pool, {
    url: config.alertWebhookUrl,
    consoleUrl: config.consolePublicUrl,
    logger,
    service: 'webhook-inbox receiver',
  });
  registerAlertMetrics(metrics.registry, () => alerter.stats());
  const refusals = createSignatureFailureMonitor({ alerter, threshold: config.signatureFailureThreshold });
  // The console follows the admin API's listener (the management one unless ADMIN_LISTENER=public); it exists when
  // it can be signed in to: single sign-on, or the admin token as break-glass.
  const operatorConsole =
    config.adminToken || config.console.oidc
      ? createReceiverConsole({
          databaseUrl: config.databaseUrl,
          databasePooler: config.databasePooler,
          boss,
          adminToken: config.adminToken,
          signIn: config.console,
          trustedProxies: config.trustedProxies,
          caselessIdProviders: config.caselessIdProviders,
          logger,
        })
      : undefined;
  const publicConsole = config.adminListener === 'public' ? operatorConsole?.console : undefined;
  // @hono/otel is loaded only when tracing is on (server.ts starts the SDK first).
  const requestSpans = tracingInstalled() ? (await import('./tracing.ts')).requestSpans() : undefined;
  const app = createApp({
    requestSpans,
    pool,
    boss,
    providers,
    logger,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    batch: config.batch,
    bodyBudget,
    bodyTimeoutMs: config.bodyTimeoutMs,
    logSampler,
    adminToken: config.adminListener === 'public' ? config.adminToken : undefined,
    adminAccess,
    caselessIdProviders: config.caselessIdProviders,
    onSignatureRefused: (provider) => refusals.record(provider),
    deliveryCounter,
    console: publicConsole,
    groupCommit: { maxTransactions: config.groupCommitTransactions, maxBatch: config.groupCommitMaxBatch },
  });
  const management = createManagementApp({
    pool,
    boss,
    logger,
    metrics,
    isShuttingDown: () => shuttingDown,
    adminToken: config.adminListener === 'management' ? config.adminToken : undefined,
    console: config.adminListener === 'management' ? operatorConsole?.console : undefined,
    adminAccess,
    caselessIdProviders: config.caselessIdProviders,
    allowedHosts: config.managementAllowedHosts,
  });

  let server: ServerType | undefined;
  let managementServer: ServerType | undefined;
  try {
    managementServer = await listen(
      { fetch: management.fetch, port: config.managementPort, hostname: config.managementHost },
      {},
    );
    server = await listen(
      {
        fetch: async (request, env) => {
          inFlight++;
          try {
            return await app.fetch(request, env);
          } finally {
            if (--inFlight === 0) onIdle?.();
          }
        },
        port: config.port,
        hostname: config.host,
      },
      {
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        // How often Node looks for requests past those two deadlines (its default is 30 s).
        connectionsCheckingInterval: 1_000,
      },
      config.maxConnections,
    );
  } catch (error) {
    logSampler.close();
    adminAccess.close();
    await inboxSampler.stop();
    await deliveryCounter.stop();
    managementServer?.close();
    await alerter.close();
    await operatorConsole?.pool.end().catch(() => {});
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await pool.end().catch(() => {});
    throw error;
  }
  // Resumes any bulk replay a stopped or crashed process left unfinished.
  operatorConsole?.console.start();
  // Node closes a connection past MAX_CONNECTIONS as it arrives; say so (sampled, like every refusal).
  server.on('drop', () => {
    if (logSampler.allow('connection dropped')) {
      logger.warn({ maxConnections: config.maxConnections }, 'connection dropped: MAX_CONNECTIONS reached');
    }
  });
  const url = urlOf(config.host, server);
  const managementUrl = urlOf(config.managementHost, managementServer);
  logger.info(
    {
      url,
      managementUrl,
      admin: config.adminToken ? config.adminListener : 'disabled',
      console: operatorConsole
        ? `${config.adminListener === 'public' ? url : managementUrl}/console`
        : 'disabled',
      providers: [...providers.keys()],
    },
    'receiver listening',
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      shuttingDown = true;
      const started = Date.now();
      logger.info({ inFlight }, 'receiver stopping: no new connections, finishing in-flight requests');
      await drainServer(
        server,
        config.shutdownTimeoutMs,
        () => inFlight,
        (listener) => (onIdle = listener),
      );
      await closeServer(managementServer);
      logSampler.close();
      adminAccess.close();
      // Every request has its answer: the last counts are written while the pool is still open.
      await inboxSampler.stop();
      await deliveryCounter.stop();
      if (operatorConsole) {
        // Its bulk replay runner finishes its chunk and releases its operation for the next process.
        await operatorConsole.console.stop().catch((error: unknown) => {
          logger.warn({ err: errorFields(error) }, 'console did not stop cleanly');
        });
        await operatorConsole.pool.end().catch(() => {});
      }
      await boss.stop({ graceful: false, close: true, timeout: 5_000 }).catch((error: unknown) => {
        logger.warn({ err: errorFields(error) }, 'pg-boss did not stop cleanly');
      });
      refusals.close(); // the total of a window of refused signatures still open, before the alerter closes
      await alerter.close();
      await pool.end().catch((error: unknown) => {
        logger.warn({ err: errorFields(error) }, 'pool did not close cleanly');
      });
      logger.info({ ms: Date.now() - started }, 'receiver stopped');
      logger.flush();
    })());

  return { url, managementUrl, close };
}

/** An HTTP server listening (resolves once bound, rejects if the address is taken). */
function listen(
  options: { fetch: Parameters<typeof serve>[0]['fetch']; port: number; hostname: string },
  serverOptions: ServerOptions,
  maxConnections?: number,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ ...options, serverOptions }, () => resolve(server));
    if (maxConnections !== undefined) server.maxConnections = maxConnections;
    server.once('error', reject);
  });
}

function urlOf(host: string, server: ServerType): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function closeServer(server: ServerType): Promise<void> {
  const http = server as Server;
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeAllConnections();
  return closed;
}

/**
 * Stops accepting, lets requests in flight finish, and closes keep-alive connections as they go idle; after
 * `timeoutMs` whatever is still open is cut off.
 */
async function drainServer(
  server: ServerType,
  timeoutMs: number,
  inFlight: () => number,
  setOnIdle: (listener: () => void) => void,
): Promise<void> {
  const http = server as Server;
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  const closeIdle = () => http.closeIdleConnections();
  setOnIdle(closeIdle);
  if (inFlight() === 0) closeIdle();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      http.closeAllConnections();
      resolve();
    }, timeoutMs);
  });
  await Promise.race([closed, deadline]);
  clearTimeout(timer);
}

/**
 * The request path's pool. Not `createPool` from @webhook-inbox/db: it needs a client-side deadline
 * (`query_timeout`), because a webhook sender waits on us (Shopify gives up after 5 s) and a database that
 * stops answering must become a quick 503, which the sender retries, rather than a hung request; and it
 * pipelines.
 */
export function createRequestPool(config: ReceiverConfig, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: config.poolSize,
    application_name: 'webhook-inbox-receiver',
    // Behind a transaction-mode pooler, statements go unnamed (see @webhook-inbox/db's pooler.ts).
    Client: clientClassFor(config.databasePooler),
    connectionTimeoutMillis: config.databaseTimeoutMs,
    query_timeout: config.databaseTimeoutMs,
    idleTimeoutMillis: 30_000,
    // pg's pipeline mode: ingest() sends `begin` and the insert together, and ends a duplicate's empty
    // transaction without waiting for it (one round trip for a redelivery, two for a new event).
    pipeline: true,
    // Keeps idle connections alive through NATs and firewalls, and lets the OS notice a peer that vanished.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  pool.on('error', (error) => logger.warn({ err: errorFields(error) }, 'idle database connection lost'));
  return pool;
}
