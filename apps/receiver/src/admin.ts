import { createHash, timingSafeEqual } from 'node:crypto';
import {
  getEvent,
  InvalidFilterError,
  isEventStatus,
  listEvents,
  type EventFilters,
} from '@webhook-inbox/inbox/event-store';
import { parseDuration } from '@webhook-inbox/inbox/ops/duration';
import { ReplayError, replayEvent } from '@webhook-inbox/inbox/replay';
import { Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from './logger.ts';

export interface AdminDeps {
  pool: pg.Pool;
  boss: PgBoss;
  /** The bearer token; unset: every /admin route answers 404, as if it did not exist. */
  token: string | undefined;
  logger: Logger;
}

type AdminError = 'unauthorized' | 'not_found' | 'invalid_filter' | 'unknown_effect';
const STATUS: Record<AdminError, 400 | 401 | 404> = {
  unauthorized: 401,
  not_found: 404,
  invalid_filter: 400,
  unknown_effect: 400,
};

function fail(code: AdminError, message: string): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (code === 'unauthorized') headers['www-authenticate'] = 'Bearer';
  return new Response(JSON.stringify({ error: { code, message } }), { status: STATUS[code], headers });
}

// Hashing first makes the comparison constant-time whatever the lengths (timingSafeEqual needs equal lengths).
const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The admin API (`Authorization: Bearer $ADMIN_TOKEN`): list events with filters and a cursor, show one event
 * with its effects and attempts, replay one. Event keys may contain `/` (Shopify's `shop:orders/create:id`):
 * send them URL-encoded or as is; both work.
 *
 * @example
 * curl -H "authorization: Bearer $ADMIN_TOKEN" 'http://127.0.0.1:3000/admin/events?status=dead&since=24h'
 */
export function createAdminApp({ pool, boss, token, logger }: AdminDeps): Hono {
  const admin = new Hono();
  const expected = token ? digest(token) : undefined;

  admin.use('*', async (c, next) => {
    if (!expected) return c.json({ error: { code: 'not_found', message: 'no such route' } }, 404);
    const header = c.req.header('authorization') ?? '';
    const presented = /^Bearer (.+)$/i.exec(header)?.[1] ?? '';
    if (!timingSafeEqual(digest(presented), expected)) {
      logger.warn({ path: c.req.path }, 'admin request refused: bad or missing bearer token');
      return fail('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
    }
    await next();
  });

  admin.get('/events', async (c) => {
    const q = c.req.query();
    const filters: EventFilters = { provider: q.provider, type: q.type, cursor: q.cursor };
    if (q.status) {
      if (!isEventStatus(q.status)) return fail('invalid_filter', `status "${q.status}" is not a status`);
      filters.status = q.status;
    }
    if (q.since) {
      const since = parseSince(q.since);
      if (!since) return fail('invalid_filter', `since must be an ISO time or a duration like 24h, 3d`);
      filters.since = since;
    }
    if (q.limit) filters.limit = Number(q.limit);
    try {
      return c.json(await listEvents(pool, filters));
    } catch (error) {
      if (error instanceof InvalidFilterError) return fail('invalid_filter', error.message);
      throw error;
    }
  });

  admin.get('/events/:provider/*', async (c) => {
    const provider = c.req.param('provider');
    const eventId = eventIdFrom(c.req.path, provider);
    const event = await getEvent(pool, provider, eventId);
    if (!event) return fail('not_found', `no ${provider} event ${eventId}`);
    // Shopify ids above 2^53 are bigint: keep their digits as strings.
    return c.body(
      JSON.stringify(event, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
      200,
      {
        'content-type': 'application/json',
      },
    );
  });

  admin.post('/events/:provider/*', async (c) => {
    const provider = c.req.param('provider');
    const path = c.req.path;
    if (!path.endsWith('/replay')) return fail('not_found', 'POST /admin/events/:provider/:id/replay');
    const eventId = eventIdFrom(path.slice(0, -'/replay'.length), provider);
    const body: unknown = await c.req.json().catch(() => ({}));
    const forceEffect =
      typeof body === 'object' && body && 'forceEffect' in body && typeof body.forceEffect === 'string'
        ? body.forceEffect
        : undefined;
    try {
      const result = await replayEvent({ pool, boss }, provider, eventId, { forceEffect });
      logger.info({ provider, eventId, forced: result.forced, enqueued: result.enqueued }, 'admin replay');
      return c.json(result, 202);
    } catch (error) {
      if (error instanceof ReplayError) return fail(error.code, error.message);
      throw error;
    }
  });

  return admin;
}

/** The event key is everything after `/admin/events/<provider>/`, URL-decoded. */
function eventIdFrom(path: string, provider: string): string {
  const marker = `/events/${encodeURIComponent(provider)}/`;
  const raw = path.slice(path.indexOf(marker) + marker.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function parseSince(text: string): Date | undefined {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const date = new Date(text);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  try {
    return new Date(Date.now() - parseDuration(text));
  } catch {
    return undefined;
  }
}
