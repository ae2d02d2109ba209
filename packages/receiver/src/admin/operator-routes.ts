import type { Console } from '@webhook-inbox/console';
import type { Env, Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { createAdminApp } from './api.ts';
import { createAdminAccess, type AdminAccess } from './access.ts';
import { mountConsole } from '../management/console.ts';
import type { Logger } from '../logger.ts';

/** What a listener needs to serve operators: the admin API's token and access, the console. */
interface OperatorRouteDeps {
  pool: pg.Pool;
  boss: PgBoss;
  logger: Logger;
  /** Unset: `/admin/*` answers 404 on this listener. */
  adminToken?: string | undefined;
  /** Unset: the admin API's own throttle, trusting no proxy. */
  adminAccess?: AdminAccess | undefined;
  /** Unset: no `/console` on this listener. */
  console?: Console | undefined;
  /**
   * The provider names whose event ids the id search matches in any case: the receiver's sources of caseless
   * types (`caselessIdProviders`). Unset: the caseless types under their own names.
   */
  caselessIdProviders?: readonly string[] | undefined;
}

/**
 * The admin API at `/admin` and the console at `/console`, mounted alike on whichever listener serves them (the
 * management listener, or the public one with `ADMIN_LISTENER=public`). Returns the admin access it used, whose
 * refusal sampler the listener's own error log shares.
 */
export function mountOperatorRoutes<E extends Env>(app: Hono<E>, deps: OperatorRouteDeps): AdminAccess {
  const { pool, boss, logger } = deps;
  const access = deps.adminAccess ?? createAdminAccess({ pool, logger });
  app.route(
    '/admin',
    createAdminApp({
      pool,
      boss,
      token: deps.adminToken,
      logger,
      access,
      caselessIdProviders: deps.caselessIdProviders,
    }),
  );
  mountConsole(app, deps.console);
  return access;
}
