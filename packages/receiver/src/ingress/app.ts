import type { HttpBindings } from '@hono/node-server';
import { BatchTooLargeError, UnknownProviderError } from '@webhook-inbox/inbox/errors';
import { createGroupCommit, DEFAULT_GROUP_COMMIT } from '@webhook-inbox/inbox/group-commit';
import type { Provider, Reception } from '@webhook-inbox/providers';
import { annotateRequest, traceIngest } from '@webhook-inbox/inbox/telemetry';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Console } from '@webhook-inbox/console';
import { NO_TRUSTED_PROXIES, throttleKey } from '@webhook-inbox/operator/access/forwarded';
import { originOf, type AdminAccess } from '../admin/access.ts';
import { readRawBody } from './body.ts';
import { createBodyBudget, type BodyBudget, type BodyLease } from './body-budget.ts';
import { DEFAULT_BATCH_LIMITS, type BatchLimits } from '../config/batch.ts';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import type { DeliveryCounter } from './delivery-counts.ts';
import { errorResponse, mapError, SIGNATURE_CODES, ThrottledError } from '../http/errors.ts';
import { createGuessLimit, SOURCE_GUESS_LIMIT, type GuessLimit } from './guess-limit.ts';
import { truncate, type Logger, type LogSampler } from '../logger.ts';
import type { ReceiverMetrics } from '../management/metrics.ts';
import { noSniff } from '../http/nosniff.ts';
import { mountOperatorRoutes } from '../admin/operator-routes.ts';

export interface AppDeps {
  /** The request pool: each group-commit transaction, and the admin API, take a connection from it. */
  pool: pg.Pool;
  /** A started pg-boss used only to send (on our transaction's connection). */
  boss: PgBoss;
  /** Endpoints by name: `/webhooks/<name>`. */
  providers: ReadonlyMap<string, Provider>;
  logger: Logger;
  metrics: ReceiverMetrics;
  maxBodyBytes: number;
  /**
   * A batching source's limits (`Provider.batches`): events per request (413 `batch_too_large` past it) and body
   * bytes (413 `payload_too_large`); unset: `DEFAULT_BATCH_LIMITS`.
   */
  batch?: BatchLimits;
  /** Bytes all bodies being received may hold together; unset: no bound beyond `maxBodyBytes` each. */
  bodyBudget?: BodyBudget;
  /** Deadline for a whole body to arrive (408 past it). Default 10 s. */
  bodyTimeoutMs?: number;
  /** Which refusal and failure lines are written; unset: all of them. */
  logSampler?: LogSampler;
  /** The clock signatures are checked against. */
  now?: () => Date;
  /**
   * Bearer token of the admin API on this listener; unset: `/admin/*` does not exist here (it is served on the
   * management listener unless `ADMIN_LISTENER=public`).
   */
  adminToken?: string;
  /** The admin API's throttle, trusted proxies and refusal log (admin-access.ts); unset: its own, trusting no proxy. */
  adminAccess?: AdminAccess;
  /**
   * The provider names whose event ids the id search matches in any case: the receiver's sources of caseless
   * types (`caselessIdProviders`). Unset: the caseless types under their own names.
   */
  caselessIdProviders?: readonly string[] | undefined;
  /** The operator console at `/console`, only when `ADMIN_LISTENER=public`; unset: it does not exist here. */
  console?: Console;
  /** Counts every answered webhook request per minute for the console's overview; unset: not counted. */
  deliveryCounter?: DeliveryCounter;
  /** Told of every refused signature, to alert when refusals jump (a rotated secret not deployed). */
  onSignatureRefused?: (provider: string) => void;
  /** How verified events are recorded together (group-commit.ts); unset: its defaults. */
  groupCommit?: { maxTransactions: number; maxBatch: number };
  /** Opens a server span per webhook request (tracing.ts); unset when tracing is off. */
  requestSpans?: MiddlewareHandler<BlankEnv>;
  /** Wrong secrets per client at the `guessable` sources (guess-limit.ts); unset: `SOURCE_GUESS_LIMIT`'s. */
  guessLimit?: GuessLimit;
}

type Env = {
  // Present when served by @hono/node-server; absent under `app.request()`.
  Bindings: Partial<HttpBindings>;
  Variables: { provider: string; startedAt: number; bodyLease: BodyLease };
};

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const LOG_EVERYTHING: LogSampler = { allow: () => true, close: () => {} };

/**
 * The receiver's public listener as a Hono app: the webhooks and a database-free `/healthz` (health,
 * readiness and metrics are on the management listener, see management.ts). Every dependency is passed in
 * (nothing connects at import time).
 *
 * @example
 * const app = createApp({ pool, boss, providers, logger, metrics, maxBodyBytes: 1_048_576 });
 * serve({ fetch: app.fetch, port: 3000 });
 */
export function createApp(deps: AppDeps): Hono<Env> {
  const { pool, boss, providers, logger, metrics, maxBodyBytes } = deps;
  const now = deps.now ?? (() => new Date());
  const bodyBudget =
    deps.bodyBudget ?? createBodyBudget({ limitBytes: Number.POSITIVE_INFINITY, evictAfterMs: 0 });
  const bodyTimeoutMs = deps.bodyTimeoutMs ?? 10_000;
  const batch = deps.batch ?? DEFAULT_BATCH_LIMITS;
  const logSampler = deps.logSampler ?? LOG_EVERYTHING;
  const guessLimit = deps.guessLimit ?? createGuessLimit(SOURCE_GUESS_LIMIT);
  const trustedProxies = deps.adminAccess?.trustedProxies ?? NO_TRUSTED_PROXIES;
  /** The key a `guessable` source's wrong secrets are counted under: the source and the client. */
  const guesser = (c: Context<Env>, name: string) =>
    `${name} ${throttleKey(originOf(c, trustedProxies).address)}`;
  // Concurrent requests share a transaction: one insert, one job insert and one commit for all of them.
  const recorder = createGroupCommit(
    { pool, boss },
    {
      ...(deps.groupCommit ?? DEFAULT_GROUP_COMMIT),
      onBatch: ({ requests, outcome }) => metrics.batchRequests.observe({ outcome }, requests),
    },
  );
  const app = new Hono<Env>();
  app.use('*', noSniff);

  if (deps.requestSpans) app.use('/webhooks/:provider', deps.requestSpans);

  // A body's bytes count against the budget from its first read until its answer is built (errors included).
  app.use('/webhooks/:provider', async (c, next) => {
    const lease = bodyBudget.open();
    c.set('bodyLease', lease);
    try {
      await next();
    } finally {
      lease.release();
    }
  });

  /** The endpoint of `/webhooks/<name>`, or `UnknownProviderError` (the request's labels are set either way). */
  const route = (c: Context<Env>): [string, Provider] => {
    const startedAt = performance.now();
    const name = c.req.param('provider') ?? '';
    const provider = providers.get(name);
    c.set('startedAt', startedAt);
    if (!provider) {
      c.set('provider', 'unknown');
      throw new UnknownProviderError(truncate(name));
    }
    c.set('provider', name);
    return [name, provider];
  };

  const finish = (
    c: Context<Env>,
    name: string,
    outcome: string,
    fields: Record<string, unknown>,
    ingestStartedAt?: number,
    httpStatus = 200,
  ) => {
    const finishedAt = performance.now();
    const startedAt = c.get('startedAt');
    if (ingestStartedAt !== undefined) {
      metrics.ingestSeconds.observe({ outcome }, (finishedAt - ingestStartedAt) / 1000);
    }
    metrics.requestSeconds.observe({ provider: name }, (finishedAt - startedAt) / 1000);
    metrics.requests.inc({ provider: name, outcome });
    deps.deliveryCounter?.count(name, outcome, httpStatus);
    logger.info({ provider: name, ...fields, outcome, ms: round(finishedAt - startedAt) }, 'webhook');
  };

  /**
   * The one answer to a webhook request: a handshake answered, or its events (one, many, none) recorded together.
   */
  const answer = async (c: Context<Env>, name: string, provider: Provider, reception: Reception) => {
    if (reception.kind === 'handshake') {
      const { status, body, contentType } = reception.answer;
      finish(c, name, 'handshake', { handshake: reception.handshake }, undefined, status);
      return c.body(body, status as ContentfulStatusCode, { 'content-type': contentType });
    }
    const { events } = reception;
    // Before any database work: a batch over the cap is refused whole rather than hold a transaction past the
    // database deadline, answer 503 and be retried as large.
    if (events.length > batch.maxItems) throw new BatchTooLargeError(batch.maxItems, events.length);
    const [only] = events;
    const single = reception.batch !== true && events.length === 1 ? only : undefined;
    const ingestStartedAt = performance.now();
    // One event, a batch of one included, shares the group commit's transactions (one insert, one job insert and
    // one commit for the requests waiting); several of one request get a transaction of their own, all or nothing.
    const outcomes =
      only !== undefined && events.length === 1
        ? [await traceIngest(only, () => recorder.record(only))]
        : await recorder.recordAll(events);
    const accepted = outcomes.filter((outcome) => outcome === 'accepted').length;
    const outcome = accepted > 0 || events.length === 0 ? 'accepted' : 'duplicate';
    annotateRequest({ provider: name, outcome, eventId: single?.eventId, type: single?.type });
    finish(
      c,
      name,
      outcome,
      single
        ? { eventId: single.eventId, type: single.type }
        : { events: events.length, accepted, duplicates: events.length - accepted },
      ingestStartedAt,
      provider.response?.status,
    );
    if (provider.response) {
      const { status, body, contentType } = provider.response;
      return c.body(body, status as ContentfulStatusCode, { 'content-type': contentType });
    }
    const answer = single
      ? `{"status":"${outcome}","id":${JSON.stringify(single.eventId)}}`
      : `{"status":"${outcome}","accepted":${accepted},"duplicates":${events.length - accepted}}`;
    return c.body(answer, 200, JSON_HEADERS);
  };

  app.post('/webhooks/:provider', async (c) => {
    const [name, provider] = route(c);
    if (provider.guessable) {
      // Before the body is read or the secret compared: a throttled client learns nothing, right secret or wrong.
      const verdict = guessLimit.check(guesser(c, name), now().getTime());
      if (!verdict.allowed) throw new ThrottledError(verdict.retryAfterSeconds);
    }
    const incoming = c.env?.incoming;
    const rawBody = await readRawBody(c.req.raw, incoming, {
      limit: provider.batches ? batch.maxBodyBytes : maxBodyBytes,
      lease: c.get('bodyLease'),
      timeoutMs: bodyTimeoutMs,
    });
    const header = incoming
      ? (field: string) => {
          const value = incoming.headers[field.toLowerCase()];
          return Array.isArray(value) ? value.join(', ') : value;
        }
      : (field: string) => c.req.raw.headers.get(field);
    // Only the certificate-based sources are awaited: the others verify synchronously, without a promise. A source
    // without `receive` has one event per request.
    const reception: Reception = provider.receiveAsync
      ? await provider.receiveAsync({ rawBody, header, method: 'POST', url: pathOf(c) }, now())
      : provider.receive
        ? provider.receive({ rawBody, header, method: 'POST', url: pathOf(c) }, now())
        : { kind: 'events', events: [provider.verify({ rawBody, header }, now())] };
    return answer(c, name, provider, reception);
  });

  // Only the handshakes some providers send as a GET (Meta's subscription, X's CRC); any other GET is a 404.
  app.get('/webhooks/:provider', async (c, next) => {
    const provider = providers.get(c.req.param('provider'));
    if (!provider?.acceptsGet || !provider.receive) return next();
    const [name] = route(c);
    const header = (field: string) => c.req.raw.headers.get(field);
    const request = { rawBody: new Uint8Array(0), header, method: 'GET', url: pathOf(c) };
    return answer(c, name, provider, provider.receive(request, now()));
  });

  // For load balancers that can only probe the port they send to; no database call, so a flood of it costs
  // nothing. Readiness (`/readyz`) and `/metrics` are on the management listener.
  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  mountOperatorRoutes(app, deps);

  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'no such route' } }, 404));

  // Every error of the webhook route ends here (the admin API has its own handler, on the same mapError) and
  // becomes a status code in http-errors.ts.
  app.onError((error, c) => {
    const provider = c.get('provider') as string | undefined;
    const mapped = mapError(error, provider === undefined ? undefined : providers.get(provider));
    const startedAt = c.get('startedAt') as number | undefined;
    const ms = startedAt === undefined ? undefined : round(performance.now() - startedAt);
    if (provider !== undefined && SIGNATURE_CODES.has(mapped.body.error.code)) {
      deps.onSignatureRefused?.(provider);
      // A wrong secret is a guess; an absent one guesses nothing.
      if (mapped.body.error.code === 'invalid_signature' && providers.get(provider)?.guessable) {
        guessLimit.refused(guesser(c, provider), now().getTime());
      }
    }
    if (provider !== undefined) {
      annotateRequest({ provider, outcome: mapped.body.error.code });
      metrics.requests.inc({ provider, outcome: mapped.body.error.code });
      deps.deliveryCounter?.count(provider, mapped.body.error.code, mapped.status);
      if (startedAt !== undefined) {
        metrics.requestSeconds.observe({ provider }, (performance.now() - startedAt) / 1000);
      }
    }
    const fields = { provider, status: mapped.status, code: mapped.body.error.code, ms };
    // A flood of refusals would otherwise be a flood of lines: sampled per kind and code (logger.ts).
    if (!mapped.expected) {
      if (logSampler.allow(`unexpected error ${fields.code}`)) {
        logger.error({ ...fields, err: errorFields(error, { stack: true }) }, 'unexpected error');
      }
    } else if (mapped.status >= 500) {
      if (logSampler.allow(`webhook not recorded ${fields.code}`)) {
        logger.error({ ...fields, err: errorFields(error) }, 'webhook not recorded');
      }
    } else if (logSampler.allow(`webhook refused ${fields.code}`)) {
      logger.warn({ ...fields, reason: truncate(mapped.body.error.message, 500) }, 'webhook refused');
    }
    return errorResponse(c, mapped);
  });

  return app;
}

/** The request's path and query as received (`/webhooks/x?a=b`). */
function pathOf(c: Context<Env>): string {
  const incoming = c.env?.incoming;
  if (incoming?.url !== undefined) return incoming.url;
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
