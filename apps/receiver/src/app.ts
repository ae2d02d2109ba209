import type { HttpBindings } from '@hono/node-server';
import { UnknownProviderError } from '@webhook-inbox/inbox/errors';
import { ingest } from '@webhook-inbox/inbox/ingest';
import type { Provider } from '@webhook-inbox/inbox/providers';
import { Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { createAdminApp } from './admin.ts';
import { readRawBody } from './body.ts';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { errorResponse, mapError } from './http-errors.ts';
import type { Logger } from './logger.ts';
import type { ReceiverMetrics } from './metrics.ts';

export interface AppDeps {
  /** The request pool: each new or duplicate event takes one connection for one short transaction. */
  pool: pg.Pool;
  /** A started pg-boss used only to send (on our transaction's connection). */
  boss: PgBoss;
  /** Endpoints by name: `/webhooks/<name>`. */
  providers: ReadonlyMap<string, Provider>;
  logger: Logger;
  metrics: ReceiverMetrics;
  maxBodyBytes: number;
  /** The clock signatures are checked against. */
  now?: () => Date;
  /** True once shutdown has begun: `/readyz` answers 503 so a load balancer stops sending. */
  isShuttingDown?: () => boolean;
  /** How long `/readyz` waits for `select 1`. */
  readyTimeoutMs?: number;
  /** Bearer token of the admin API; unset: `/admin/*` does not exist. */
  adminToken?: string;
  /** Told of every refused signature, to alert when refusals jump (a rotated secret not deployed). */
  onSignatureRefused?: (provider: string) => void;
}

type Env = {
  // Present when served by @hono/node-server; absent under `app.request()`.
  Bindings: Partial<HttpBindings>;
  Variables: { provider: string; startedAt: number };
};

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const SIGNATURE_REFUSALS = new Set(['missing_signature', 'invalid_signature', 'timestamp_out_of_tolerance']);

/**
 * The receiver as a Hono app, with every dependency passed in (nothing connects at import time).
 *
 * @example
 * const app = createApp({ pool, boss, providers, logger, metrics, maxBodyBytes: 1_048_576 });
 * serve({ fetch: app.fetch, port: 3000 });
 */
export function createApp(deps: AppDeps): Hono<Env> {
  const { pool, boss, providers, logger, metrics, maxBodyBytes } = deps;
  const now = deps.now ?? (() => new Date());
  const isShuttingDown = deps.isShuttingDown ?? (() => false);
  const readyTimeoutMs = deps.readyTimeoutMs ?? 1_000;
  const ingestDeps = { pool, boss };
  const app = new Hono<Env>();

  app.post('/webhooks/:provider', async (c) => {
    const startedAt = performance.now();
    const name = c.req.param('provider');
    const provider = providers.get(name);
    c.set('startedAt', startedAt);
    if (!provider) {
      c.set('provider', 'unknown');
      throw new UnknownProviderError(name);
    }
    c.set('provider', name);

    const incoming = c.env?.incoming;
    const rawBody = await readRawBody(c.req.raw, incoming, maxBodyBytes);
    const header = incoming
      ? (field: string) => {
          const value = incoming.headers[field.toLowerCase()];
          return Array.isArray(value) ? value.join(', ') : value;
        }
      : (field: string) => c.req.raw.headers.get(field);
    const event = provider.verify({ rawBody, header }, now());

    const ingestStartedAt = performance.now();
    const outcome = await ingest(ingestDeps, event);
    const finishedAt = performance.now();

    metrics.ingestSeconds.observe({ outcome }, (finishedAt - ingestStartedAt) / 1000);
    metrics.requestSeconds.observe({ provider: name }, (finishedAt - startedAt) / 1000);
    metrics.requests.inc({ provider: name, outcome });
    logger.info(
      {
        provider: name,
        eventId: event.eventId,
        type: event.type,
        outcome,
        ms: round(finishedAt - startedAt),
      },
      'webhook',
    );
    return c.body(`{"status":"${outcome}","id":${JSON.stringify(event.eventId)}}`, 200, JSON_HEADERS);
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    if (isShuttingDown()) return c.json({ status: 'shutting_down' }, 503);
    try {
      await withTimeout(pool.query('select 1'), readyTimeoutMs, 'select 1 timed out');
      return c.json({ status: 'ok' });
    } catch (error) {
      logger.warn({ err: errorFields(error) }, 'readiness check failed: database unreachable');
      return c.json({ status: 'unavailable', error: 'database unreachable' }, 503);
    }
  });

  app.get('/metrics', async (c) =>
    c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );

  app.route('/admin', createAdminApp({ pool, boss, token: deps.adminToken, logger }));

  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such route' } }, 404));

  // Every error of the webhook route ends here (the admin API has its own handler, on the same mapError) and
  // becomes a status code in http-errors.ts.
  app.onError((error, c) => {
    const mapped = mapError(error);
    const provider = c.get('provider') as string | undefined;
    const startedAt = c.get('startedAt') as number | undefined;
    const ms = startedAt === undefined ? undefined : round(performance.now() - startedAt);
    if (provider !== undefined && SIGNATURE_REFUSALS.has(mapped.body.error.code)) {
      deps.onSignatureRefused?.(provider);
    }
    if (provider !== undefined) {
      metrics.requests.inc({ provider, outcome: mapped.body.error.code });
      if (startedAt !== undefined) {
        metrics.requestSeconds.observe({ provider }, (performance.now() - startedAt) / 1000);
      }
    }
    const fields = { provider, status: mapped.status, code: mapped.body.error.code, ms };
    if (!mapped.expected) {
      logger.error({ ...fields, err: errorFields(error, { stack: true }) }, 'unexpected error');
    } else if (mapped.status >= 500) {
      logger.error({ ...fields, err: errorFields(error) }, 'webhook not recorded');
    } else {
      logger.warn({ ...fields, reason: mapped.body.error.message }, 'webhook refused');
    }
    return errorResponse(c, mapped);
  });

  return app;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
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
