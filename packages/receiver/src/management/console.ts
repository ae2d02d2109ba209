import { createConsole, type Console } from '@webhook-inbox/console';
import { createPool, type DatabasePooler } from '@webhook-inbox/db';
import type { TrustedProxies } from '@webhook-inbox/operator/access/forwarded';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import type { Context, Env, Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { ConsoleConfig } from '../config/console.ts';
import { createLogSampler, type Logger } from '../logger.ts';
import { REFUSAL_LOG_WINDOW_MS } from '../admin/access.ts';

/** The operator console as the receiver serves it, with the pool it alone uses. */
interface ReceiverConsole {
  console: Console;
  /** Closed after `console.stop()`, at the receiver's shutdown. */
  pool: pg.Pool;
}

/** Connections the console holds at most: a few operators' pages and the bulk replay runner's chunk. */
const CONSOLE_POOL_SIZE = 4;

/**
 * The console for the receiver's admin listener (`ADMIN_LISTENER`), signed in to through the identity provider
 * (`OIDC_*`) or with the break-glass `ADMIN_TOKEN`.
 *
 * It has its own small pool: its searches may take seconds on a large table (its own 5 s statement timeout),
 * which the request pool's short client-side deadline would cut off, and they must never hold the connections
 * webhooks are stored on.
 *
 * Replays read the effects the worker recorded at its start (`effect_routes`), as the admin API and the CLI do.
 */
export function createReceiverConsole(deps: {
  databaseUrl: string;
  databasePooler: DatabasePooler;
  boss: PgBoss;
  adminToken: string | undefined;
  signIn: ConsoleConfig;
  trustedProxies: TrustedProxies;
  caselessIdProviders: readonly string[];
  logger: Logger;
}): ReceiverConsole {
  const logger = deps.logger.child({ component: 'console' });
  const pool = createPool({
    connectionString: deps.databaseUrl,
    pooler: deps.databasePooler,
    max: CONSOLE_POOL_SIZE,
    applicationName: 'webhook-inbox-console',
    onError: (error) => logger.warn({ err: errorFields(error) }, 'console database connection lost'),
  });
  // One refusal line of each kind a minute; the timer is unref'd, so an unclosed sampler never holds the process.
  const refusals = createLogSampler(logger, { perWindow: 1, windowMs: REFUSAL_LOG_WINDOW_MS });
  const console = createConsole({
    pool,
    boss: deps.boss,
    adminToken: deps.adminToken,
    oidc: deps.signIn.oidc,
    sessionSecret: deps.signIn.sessionSecret,
    maskedRoles: deps.signIn.maskedRoles,
    trustedProxies: deps.trustedProxies,
    caselessIdProviders: deps.caselessIdProviders,
    sampleRefusal: (kind) => refusals.allow(kind),
    logger,
  });
  return { console, pool };
}

/**
 * Serves the console's routes (`/console`, `/console/*`) from `app`. Forwarded rather than `app.route()`d, so
 * the console's own not-found page and error handler answer under its path, and it sees the client's socket
 * (for the audit log's address).
 */
export function mountConsole<E extends Env>(app: Hono<E>, console: Console | undefined): void {
  if (!console) return;
  const forward = (c: Context<E>) => console.app.fetch(c.req.raw, c.env);
  app.all('/console', forward);
  app.all('/console/*', forward);
}
