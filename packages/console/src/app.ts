import { loadEffectLookup, type EffectLookup } from '@webhook-inbox/inbox/effect-routes';
import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import { Hono } from 'hono';
import { deleteCookie } from 'hono/cookie';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Role } from '@webhook-inbox/operator/access/roles';
import { NO_TRUSTED_PROXIES, type TrustedProxies } from '@webhook-inbox/operator/access/forwarded';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { consoleRevokedSessions } from '@webhook-inbox/operator/sql';
import { assetRoutes } from './assets.ts';
import { requireSession, sameOrigin, securityHeaders, SESSION_COOKIE } from './auth/middleware.ts';
import { createLoginThrottle } from './auth/login-throttle.ts';
import { createOidcClient, type OidcOptions } from './auth/oidc.ts';
import { requirePermission } from './auth/permissions.ts';
import { authRoutes } from './auth/routes.ts';
import { createSessions } from './auth/session.ts';
import { audit, type ConsoleContext, type ConsoleEnv, type ConsoleServices } from './context.ts';
import { run } from './db.ts';
import { ConsoleError } from './errors.ts';
import { startOperationsRunner, type OperationsRunner } from './operations/runner.ts';
import { alertsPage } from './pages/alerts.ts';
import { auditPage } from './pages/audit.ts';
import { deadPage } from './pages/dead.ts';
import { destinationsPages } from './pages/destinations.ts';
import { eventPage } from './pages/event.ts';
import { eventsPage } from './pages/events.ts';
import { failuresPages } from './pages/failures.ts';
import { operationsPages } from './pages/operations.ts';
import { overviewPage } from './pages/overview.ts';
import { databaseUnavailable, errorPage } from './views/error-page.ts';
import { tokensPage } from './pages/tokens.ts';

export interface ConsoleOptions {
  pool: pg.Pool;
  /** A started pg-boss: replays send their job in their own transaction through it. */
  boss: PgBoss;
  /**
   * The break-glass token (16+ characters): a sign-in as `admin`, audited as `break-glass@<address>`, for when
   * single sign-on is down. Unset: no break-glass sign-in (then `oidc` is required).
   */
  adminToken?: string | undefined;
  /** Operators sign in through the company's identity provider (OpenID Connect); their group claim gives the role. */
  oidc?: OidcOptions | undefined;
  /**
   * A key for the session cookies of its own (`CONSOLE_SESSION_SECRET`, 32+ characters). Unset: derived from the
   * admin token and the OpenID Connect client secret, so rotating either ends every session.
   */
  sessionSecret?: string | undefined;
  /** Proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`TRUSTED_PROXIES`). Default: none. */
  trustedProxies?: TrustedProxies;
  /** Whether a refusal of this kind may be logged now (a sampler); default: every one is. */
  sampleRefusal?: (kind: string) => boolean;
  logger: Logger;
  /**
   * Which effects are registered for an event type, for a replay's plan. Default: what the worker recorded at
   * its start (`effect_routes`), read per replay; pass `inbox.effectsFor` when the default group's worker's
   * registry is in this process (another group's replays read that group's routes).
   */
  effectsFor?: EffectLookup;
  /**
   * The roles that see an event's subject (a customer's id and email) and error texts masked, as every role
   * without `read_payload` sees payloads (`CONSOLE_MASKED_ROLES`). Default: `viewer`.
   */
  maskedRoles?: readonly Role[];
  /**
   * The provider names whose event ids the id search matches in any case: the receiver's sources of caseless
   * types (`caselessIdProviders`). Unset: the caseless types under their own names.
   */
  caselessIdProviders?: readonly string[] | undefined;
  /** Where the console is mounted. Default `/console`. */
  basePath?: string;
  /** How long a sign-in lasts. Default 8 hours. */
  sessionTtlMs?: number;
  /**
   * Refused break-glass sign-ins one client address (`maxFailures`, default 5) and the account from every address
   * (`accountMaxFailures`, default 20) may make in a window of `windowMs` (default 15 minutes) from the first; past
   * it every attempt gets 429 `too_many_attempts` until the window ends.
   */
  loginThrottle?: { maxFailures?: number; accountMaxFailures?: number; windowMs?: number };
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
 * The operator console: server-rendered pages (Hono's `html` templates) with htmx for polling, behind a sign-in
 * through the identity provider (roles viewer, operator, admin) or the break-glass admin token.
 *
 * @example
 * const console = createConsole({ pool, boss, adminToken: env.ADMIN_TOKEN, oidc, logger });
 * managementApp.route('/', console.app);
 * console.start();
 * // at shutdown: await console.stop();
 */
export function createConsole(options: ConsoleOptions): Console {
  if (options.adminToken !== undefined && options.adminToken.length < 16) {
    throw new RangeError('the console needs an admin token of 16+ characters');
  }
  if (options.adminToken === undefined && options.oidc === undefined) {
    throw new RangeError('the console needs an OpenID Connect provider or an admin token to sign in with');
  }
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
      sessionSecret: options.sessionSecret,
      adminToken: options.adminToken,
      clientSecret: options.oidc?.clientSecret,
      ttlMs: sessionTtlMs,
      now: () => now().getTime(),
    }),
    trustedProxies: options.trustedProxies ?? NO_TRUSTED_PROXIES,
    queryTimeoutMs: options.queryTimeoutMs ?? 5000,
    sampleRefusal: options.sampleRefusal ?? (() => true),
    maskedRoles: options.maskedRoles ?? ['viewer'],
    caselessIdProviders: options.caselessIdProviders,
    wakeRunner: () => runner?.wake(),
  };

  // Not strict: /console and /console/ are the same page.
  const app = new Hono<ConsoleEnv>({ strict: false }).basePath(base);
  app.use('*', securityHeaders, sameOrigin(services.trustedProxies));
  app.route('/', assetRoutes());
  app.route(
    '/',
    authRoutes(services, {
      sessionTtlMs,
      throttle: createLoginThrottle(options.pool, {
        maxFailures: options.loginThrottle?.maxFailures ?? 5,
        accountMaxFailures: options.loginThrottle?.accountMaxFailures ?? 20,
        windowMs: options.loginThrottle?.windowMs ?? 15 * 60_000,
      }),
      oidc: options.oidc ? createOidcClient(options.oidc) : undefined,
      breakGlass: options.adminToken !== undefined,
    }),
  );

  const pages = new Hono<ConsoleEnv>();
  pages.use('*', requireSession(services));
  // Every action's permission, before its route: a hidden button is never the only check.
  pages.post('/event/replay', requirePermission(replayPermission));
  pages.get('/event/force', requirePermission('force'));
  pages.post('/bulk', requirePermission('replay'));
  // "Replay selected" posts to the list it is on.
  pages.post('/events', requirePermission('replay'));
  pages.post('/dead', requirePermission('replay'));
  pages.post('/operations/*', requirePermission('replay'));
  pages.post('/failures/*', requirePermission('triage'));
  pages.post('/destinations/*', requirePermission('triage'));
  pages.use('/tokens', requirePermission('manage_tokens'));
  pages.use('/tokens/*', requirePermission('manage_tokens'));
  // A filter on payload values would let a role that sees no payloads read them one guess at a time.
  for (const path of ['/events', '/bulk']) pages.get(path, requirePermission(payloadFilterPermission));
  pages.post('/events', requirePermission(payloadFilterPermission));
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
  destinationsPages(pages, services);
  alertsPage(pages, services);
  auditPage(pages, services);
  tokensPage(pages, services);
  app.route('/', pages);

  app.notFound((c) => errorPage(c, new ConsoleError('not_found', 'no such page'), base));
  app.onError((error, c) => {
    if (error instanceof ConsoleError) return errorPage(c, error, base);
    const unavailable = databaseUnavailable(error);
    if (unavailable) {
      options.logger.warn(
        { ...errorFields(error), path: c.req.path },
        'console: the database is not answering',
      );
      return errorPage(c, unavailable, base);
    }
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
        caselessIdProviders: options.caselessIdProviders,
        ...options.operations,
      });
    },
    async stop() {
      await runner?.stop();
      runner = undefined;
    },
  };
}

/** Replaying needs `replay`; forcing a completed effect (the form's `force` field) needs `force`. */
async function replayPermission(c: ConsoleContext): Promise<'replay' | 'force'> {
  const form: Record<string, unknown> = await c.req.parseBody().catch(() => ({}));
  return typeof form.force === 'string' && form.force !== '' ? 'force' : 'replay';
}

/** Filtering on a payload path or value needs `read_payload`; the other filters need `read`. */
function payloadFilterPermission(c: ConsoleContext): Promise<'read' | 'read_payload'> {
  return Promise.resolve(c.req.query('path') || c.req.query('value') ? 'read_payload' : 'read');
}
