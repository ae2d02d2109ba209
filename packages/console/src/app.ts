import { loadEffectLookup } from '@webhook-inbox/inbox/effect-routes';
import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import type { EffectLookup } from '@webhook-inbox/inbox/replay';
import { Hono, type Context } from 'hono';
import { deleteCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { consoleRevokedSessions } from '@webhook-inbox/inbox/sql';
import { assetRoutes } from './assets.ts';
import { requireSession, sameOrigin, securityHeaders, SESSION_COOKIE } from './auth/middleware.ts';
import { authRoutes } from './auth/routes.ts';
import { createSessions } from './auth/session.ts';
import { audit, type ConsoleEnv, type ConsoleServices } from './context.ts';
import { run } from './db.ts';
import { ConsoleError } from './errors.ts';
import { startOperationsRunner, type OperationsRunner } from './operations/runner.ts';
import { alertsPage } from './pages/alerts.ts';
import { auditPage } from './pages/audit.ts';
import { deadPage } from './pages/dead.ts';
import { eventPage } from './pages/event.ts';
import { eventsPage } from './pages/events.ts';
import { failuresPages } from './pages/failures.ts';
import { operationsPages } from './pages/operations.ts';
import { overviewPage } from './pages/overview.ts';
import { layout } from './views/layout.ts';

export interface ConsoleOptions {
  pool: pg.Pool;
  /** A started pg-boss: replays send their job in their own transaction through it. */
  boss: PgBoss;
  /** The token operators sign in with (16+ characters); its change ends every session. */
  adminToken: string;
  logger: Logger;
  /**
   * Which effects are registered for an event type, for a replay's plan. Default: what the worker recorded at
   * its start (`effect_routes`), read per replay; pass `inbox.effectsFor` when the default group's worker's
   * registry is in this process (another group's replays read that group's routes).
   */
  effectsFor?: EffectLookup;
  /** Where the console is mounted. Default `/console`. */
  basePath?: string;
  /** How long a sign-in lasts. Default 8 hours. */
  sessionTtlMs?: number;
  /**
   * Refused sign-ins one client address may make within `windowMs`, counted since its last success, before it
   * gets 429 `too_many_attempts` until the oldest of them leaves the window. Default 5 per 15 minutes.
   */
  loginThrottle?: { maxFailures?: number; windowMs?: number };
  /** Deadline of one console query, ms. Default 5000. */
  queryTimeoutMs?: number;
  /** Bulk replay runner settings (see `startOperationsRunner`). */
  operations?: { chunkSize?: number; concurrency?: number; pollIntervalMs?: number; leaseMs?: number };
  clock?: () => Date;
}

export interface Console {
  /** Serve it as is, or mount it: `app.route('/', console.app)` (its routes already start with `basePath`). */
  app: Hono<ConsoleEnv>;
  /** Starts the bulk replay runner, which resumes any unfinished operation. */
  start(): void;
  /** Stops the runner after its current chunk. */
  stop(): Promise<void>;
}

/**
 * The operator console: server-rendered pages (Hono's `html` templates) with htmx for polling, behind a
 * sign-in with the admin token.
 *
 * @example
 * const console = createConsole({ pool, boss, adminToken: env.ADMIN_TOKEN, logger });
 * managementApp.route('/', console.app);
 * console.start();
 * // at shutdown: await console.stop();
 */
export function createConsole(options: ConsoleOptions): Console {
  if (options.adminToken.length < 16)
    throw new RangeError('the console needs an admin token of 16+ characters');
  const base = (options.basePath ?? '/console').replace(/\/+$/, '');
  const now = options.clock ?? (() => new Date());
  const sessionTtlMs = options.sessionTtlMs ?? 8 * 3_600_000;
  let runner: OperationsRunner | undefined;
  const given = options.effectsFor;
  const effectsFor = (group = DEFAULT_GROUP) =>
    given && group === DEFAULT_GROUP ? Promise.resolve(given) : loadEffectLookup(options.pool, group);
  const services: ConsoleServices = {
    pool: options.pool,
    boss: options.boss,
    logger: options.logger,
    effectsFor,
    base,
    now,
    sessions: createSessions({
      adminToken: options.adminToken,
      ttlMs: sessionTtlMs,
      now: () => now().getTime(),
    }),
    queryTimeoutMs: options.queryTimeoutMs ?? 5000,
    wakeRunner: () => runner?.wake(),
  };

  // Not strict: /console and /console/ are the same page.
  const app = new Hono<ConsoleEnv>({ strict: false }).basePath(base);
  app.use('*', securityHeaders, sameOrigin);
  app.route('/', assetRoutes());
  app.route(
    '/',
    authRoutes(services, sessionTtlMs, {
      maxFailures: options.loginThrottle?.maxFailures ?? 5,
      windowMs: options.loginThrottle?.windowMs ?? 15 * 60_000,
    }),
  );

  const pages = new Hono<ConsoleEnv>();
  pages.use('*', requireSession(services));
  pages.post('/logout', async (c) => {
    // The cookie is signed, not stored: a copy of it stays valid until this row says it was signed out.
    const session = c.get('session');
    await run(services.pool, consoleRevokedSessions.revokeSession(session.id, new Date(session.expiresAt)));
    await audit(services, c, 'logout', null);
    deleteCookie(c, SESSION_COOKIE, { path: base || '/' });
    return c.redirect(`${base}/login?why=signed_out`, 303);
  });
  overviewPage(pages, services);
  eventsPage(pages, services);
  eventPage(pages, services);
  operationsPages(pages, services);
  deadPage(pages, services);
  failuresPages(pages, services);
  alertsPage(pages, services);
  auditPage(pages, services);
  app.route('/', pages);

  app.notFound((c) => errorPage(c, new ConsoleError('not_found', 'no such page'), base));
  app.onError((error, c) => {
    if (error instanceof ConsoleError) return errorPage(c, error, base);
    options.logger.error({ ...errorFields(error), path: c.req.path }, 'console request failed');
    return errorPage(c, new ConsoleError('invalid_input', 'internal error'), base, 500);
  });

  return {
    app,
    start() {
      runner ??= startOperationsRunner({
        pool: options.pool,
        boss: options.boss,
        effectsFor,
        logger: options.logger,
        ...options.operations,
      });
    },
    async stop() {
      await runner?.stop();
      runner = undefined;
    },
  };
}

/** Every refusal: an HTML page for a browser, JSON for htmx and scripts; the stable code in both. */
function errorPage(c: Context<ConsoleEnv>, error: ConsoleError, base: string, status?: 500) {
  const code = status ? 'internal' : error.code;
  const httpStatus = status ?? error.status;
  if (c.req.header('hx-request') === 'true' || !c.req.header('accept')?.includes('text/html')) {
    return c.json({ error: { code, message: error.message } }, httpStatus);
  }
  const signIn = error.code === 'session_expired' || error.code === 'unauthorized';
  return c.html(
    layout({
      base,
      title: 'Refused',
      body: html`<h1>${error.message}</h1>
        <p>Error code <code>${code}</code> (HTTP ${httpStatus}).</p>
        <p>
          <a href="${signIn ? `${base}/login` : `${base}/`}"
            >${signIn ? 'Sign in' : 'Back to the overview'}</a
          >
        </p>`,
    }),
    httpStatus,
  );
}
