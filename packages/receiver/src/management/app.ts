import { errorFields } from '@webhook-inbox/inbox/error-text';
import { Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Console } from '@webhook-inbox/console';
import type { AdminAccess } from '../admin/access.ts';
import {
  allowedHostsOnly,
  LOOPBACK_HOSTS,
  parseAllowedHosts,
  type AllowedHosts,
} from '@webhook-inbox/operator/access/allowed-hosts';
import { cachedFor } from './cached.ts';
import { errorResponse, mapError } from '../http/errors.ts';
import { registerInboxMetrics } from './inbox-metrics.ts';
import type { Logger } from '../logger.ts';
import type { ReceiverMetrics } from './metrics.ts';
import { noSniff } from '../http/nosniff.ts';
import { mountOperatorRoutes } from '../admin/operator-routes.ts';

export interface ManagementDeps {
  /** The request pool, which readiness checks with `select 1`. */
  pool: pg.Pool;
  /** A started pg-boss (the admin API's replays send on it). */
  boss: PgBoss;
  logger: Logger;
  metrics: ReceiverMetrics;
  /** True once shutdown has begun: `/readyz` answers 503 so a load balancer stops sending. */
  isShuttingDown?: () => boolean;
  /** How long `/readyz` waits for `select 1`. Default 1 s. */
  readyTimeoutMs?: number;
  /** How long one readiness result is reused. Default 1 s. */
  readyCacheMs?: number;
  /** How long one read of the database for `/metrics`' inbox gauges is reused (see inbox-metrics.ts). Default 5 s. */
  statsMaxAgeMs?: number;
  /** Bearer token of the admin API on this listener; unset: `/admin/*` does not exist here. */
  adminToken?: string;
  /** The operator console, served at `/console` on this listener; unset: it does not exist here. */
  console?: Console;
  /** The admin API's throttle, trusted proxies and refusal log (admin-access.ts); unset: its own, trusting no proxy. */
  adminAccess?: AdminAccess;
  /**
   * The provider names whose event ids the id search matches in any case: the receiver's sources of caseless
   * types (`caselessIdProviders`). Unset: the caseless types under their own names.
   */
  caselessIdProviders?: readonly string[] | undefined;
  /** The `Host` names answered (`MANAGEMENT_ALLOWED_HOSTS`); unset: the loopback names. */
  allowedHosts?: AllowedHosts;
}

type Readiness = { ok: boolean };

/**
 * The receiver's management listener (`MANAGEMENT_HOST`:`MANAGEMENT_PORT`, 127.0.0.1 by default), kept off the
 * port providers reach: `/healthz`, `/readyz`, `/metrics`, and the admin API and the operator console (`/console`)
 * unless `ADMIN_LISTENER=public`. Only for a `Host` in `allowedHosts` (the health probes for any): a DNS-rebinding
 * page in an operator's browser is refused (421 `host_not_allowed`).
 * `/readyz` asks the database at most once per `readyCacheMs` however many probes arrive: probes in the
 * meantime, concurrent ones included, share the last answer, so a probe flood cannot take the request pool's
 * connections from the webhooks. `/metrics` reads the inbox's gauges from the database the same way, at most once
 * per `statsMaxAgeMs`.
 *
 * @example
 * const management = createManagementApp({ pool, boss, logger, metrics });
 * serve({ fetch: management.fetch, port: 3002, hostname: '127.0.0.1' });
 */
export function createManagementApp(deps: ManagementDeps): Hono {
  const { pool, logger, metrics } = deps;
  const isShuttingDown = deps.isShuttingDown ?? (() => false);
  const readyTimeoutMs = deps.readyTimeoutMs ?? 1_000;
  const readyCacheMs = deps.readyCacheMs ?? 1_000;
  const app = new Hono();
  app.use('*', noSniff);
  app.use(
    '*',
    allowedHostsOnly(deps.allowedHosts ?? parseAllowedHosts(LOOPBACK_HOSTS), 'MANAGEMENT_ALLOWED_HOSTS'),
  );

  const readiness = cachedFor(readyCacheMs, () =>
    withTimeout(pool.query('select 1'), readyTimeoutMs, 'select 1 timed out').then(
      (): Readiness => ({ ok: true }),
      (error: unknown): Readiness => {
        logger.warn({ err: errorFields(error) }, 'readiness check failed: database unreachable');
        return { ok: false };
      },
    ),
  );
  registerInboxMetrics(metrics.registry, { pool, logger, maxAgeMs: deps.statsMaxAgeMs });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    if (isShuttingDown()) return c.json({ status: 'shutting_down' }, 503);
    const result = await readiness();
    if (result.ok) return c.json({ status: 'ok' });
    return c.json({ status: 'unavailable', error: 'database unreachable' }, 503);
  });

  app.get('/metrics', async (c) =>
    c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );

  const access = mountOperatorRoutes(app, deps);

  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such route' } }, 404));

  // Errors become statuses in the one place that decides them (http-errors.ts).
  app.onError((error, c) => {
    const mapped = mapError(error);
    const fields = { path: c.req.path.slice(0, 200), status: mapped.status, code: mapped.body.error.code };
    if (!mapped.expected) {
      logger.error({ ...fields, err: errorFields(error, { stack: true }) }, 'unexpected error');
    } else if (access.refusals.allow(`management request refused ${fields.code}`)) {
      logger.warn({ ...fields, reason: mapped.body.error.message }, 'management request refused');
    }
    return errorResponse(c, mapped);
  });

  return app;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
