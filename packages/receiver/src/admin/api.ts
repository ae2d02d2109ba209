import { EVENT_STATUSES } from '@webhook-inbox/db/statuses';
import { errorFields } from '@webhook-inbox/inbox/error-text';
import { PayloadTooLargeError } from '@webhook-inbox/inbox/errors';
import { getEvent, listEvents } from '@webhook-inbox/inbox/event-store';
import { MAX_EVENT_FIELD_LENGTH } from '@webhook-inbox/providers';
import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import { readInboxStats } from '@webhook-inbox/operator/inbox-stats';
import { replayEvent } from '@webhook-inbox/operator/replay';
import { can, type Principal } from '@webhook-inbox/operator/access/roles';
import { effectRoutes } from '@webhook-inbox/inbox/sql';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { adminPrincipal, originOf, requirePermission, type AdminAccess, type AdminEnv } from './access.ts';
import { destinationRoutes } from './destinations.ts';
import { listenRoutes } from './listen.ts';
import { auditRoutes } from './audit.ts';
import { bulkReplayRoutes } from './bulk-replay.ts';
import { groupFor, groupReplayDeps, requireGroup } from './groups.ts';
import {
  firstIssue,
  groupName,
  jsonBody,
  optional,
  pageLimit,
  providerName,
  sinceText,
  text,
} from './params.ts';
import { tokenRoutes } from './tokens.ts';
import { AdminError, errorResponse, mapError } from '../http/errors.ts';
import type { Logger } from '../logger.ts';

interface AdminDeps {
  pool: pg.Pool;
  boss: PgBoss;
  /**
   * The break-glass bearer token (`ADMIN_TOKEN`); API tokens (`api_tokens`) are taken beside it. Unset: every
   * /admin route answers 404, as if it did not exist.
   */
  token: string | undefined;
  logger: Logger;
  /** The throttle, the trusted proxies and the refusal log's sampler (admin-access.ts). */
  access: AdminAccess;
  /**
   * The provider names whose event ids the id search matches in any case: the receiver's sources of caseless
   * types (`caselessIdProviders`). Unset: the caseless types under their own names.
   */
  caselessIdProviders?: readonly string[] | undefined;
}

/** The largest replay body read (it holds at most `{"forceEffect":"<name>"}`); past it, 413. */
const REPLAY_BODY_LIMIT = 64 * 1024;
/** The longest event key a lookup accepts: the webhook route records at most `MAX_EVENT_FIELD_LENGTH`. */
const MAX_LOOKUP_KEY_LENGTH = 1024;
/** What `bearerAuth` accepts as a token (RFC 6750's b64token): a token with other characters could never match. */
const BEARER_TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;

const LIST_QUERY = z.strictObject({
  provider: optional(providerName),
  // The consumer group whose status the events' own fields are and `status` filters on (groups.ts).
  group: optional(groupName),
  type: optional(text(MAX_EVENT_FIELD_LENGTH)),
  // Free text (EventFilter.search): an event id or its start, a subject value (customer, email, shop), a type.
  q: optional(text(MAX_EVENT_FIELD_LENGTH)),
  status: optional(z.enum(EVENT_STATUSES, { error: `must be one of ${EVENT_STATUSES.join(', ')}` })),
  since: optional(sinceText),
  limit: optional(pageLimit),
  cursor: optional(
    z
      .string()
      .max(4096)
      .regex(/^[A-Za-z0-9_-]+$/, { error: 'is not one this API returned' }),
  ),
});

const REPLAY_BODY = z.strictObject({
  forceEffect: text(MAX_EVENT_FIELD_LENGTH).optional(),
  group: groupName.optional(),
});

/** The query of `show` and `stats`: nothing but an optional consumer group. */
const GROUP_QUERY = z.strictObject({ group: optional(groupName) });

/**
 * The admin API (`Authorization: Bearer <ADMIN_TOKEN or an API token>`): list events with filters and a cursor,
 * show one event with its effects and attempts, replay one, manage API tokens (admin-tokens.ts). Each route checks
 * its permission (403 `forbidden`) and the principal's consumer groups: a principal limited to some groups sees only
 * events of types they have effects for (others are 404, as if absent) and replays only their effects. Each change
 * writes its audit row in its own transaction. Event keys may contain `/` (Shopify's `shop:orders/create:id`):
 * send them URL-encoded or as is; both work. Every refusal is thrown as a typed error and answered by
 * `mapError` (`{"error":{"code","message"}}`); this app has its own error handler so it answers the same
 * wherever it is mounted.
 *
 * @example
 * curl -H "authorization: Bearer $ADMIN_TOKEN" 'http://127.0.0.1:3002/admin/events?status=dead&since=24h'
 */
export function createAdminApp({
  pool,
  boss,
  token,
  logger,
  access,
  caselessIdProviders,
}: AdminDeps): Hono<AdminEnv> {
  const admin = new Hono<AdminEnv>();

  admin.onError((error, c) => {
    const mapped = mapError(error);
    const fields = {
      path: c.req.path.slice(0, 200),
      status: mapped.status,
      code: mapped.body.error.code,
      client: originOf(c, access.trustedProxies).address,
    };
    if (!mapped.expected) {
      logger.error({ ...fields, err: errorFields(error, { stack: true }) }, 'unexpected error');
    } else if (access.refusals.allow(`admin request refused ${fields.code}`)) {
      // The first of a kind, then a count per window: a flood of guesses is a few lines.
      logger.warn({ ...fields, reason: mapped.body.error.message }, 'admin request refused');
    }
    return errorResponse(c, mapped);
  });

  if (!token) {
    admin.all('*', () => {
      throw new AdminError('not_found', 'no such route');
    });
    return admin;
  }
  if (!BEARER_TOKEN.test(token)) {
    throw new TypeError(
      'ADMIN_TOKEN may contain only letters, digits and . _ ~ + / - (then = padding), as a bearer token does',
    );
  }
  admin.use('*', adminPrincipal(token, pool, access));
  admin.route('/tokens', tokenRoutes(pool));
  admin.route('/listeners', listenRoutes(pool));
  admin.route('/destinations', destinationRoutes(pool));
  admin.route('/replay', bulkReplayRoutes(pool, boss, logger));
  admin.route('/audit', auditRoutes(pool));

  // A principal limited to some groups: an event of a type none of them has an effect for is not there for it.
  const requireVisible = async (principal: Principal, provider: string, eventId: string) => {
    if (principal.groups === null) return;
    const { rows } = await pool.query<{ visible: boolean }>(
      effectRoutes.selectEventVisible(provider, eventId, principal.groups),
    );
    if (!rows[0]?.visible) throw new AdminError('not_found', `no ${provider} event ${eventId}`);
  };

  admin.get('/events', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read');
    const query = LIST_QUERY.safeParse(c.req.query());
    if (!query.success) throw new AdminError('invalid_filter', firstIssue(query.error));
    const { q, group, ...filters } = query.data;
    return c.json(
      await listEvents(pool, {
        ...filters,
        group: groupFor(principal, group),
        search: q,
        caselessIdProviders,
        visibleTo: principal.groups ?? undefined,
      }),
    );
  });

  admin.get('/stats', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read');
    const { group } = groupQuery(c.req.query());
    // The whole inbox for a principal of every group that names none; otherwise one group's part.
    const scope =
      group === undefined && principal.groups === null ? {} : { group: groupFor(principal, group) };
    return c.json(await readInboxStats(pool, scope));
  });

  admin.get('/events/:provider/*', async (c) => {
    const principal = c.get('principal');
    requirePermission(principal, 'read');
    const { provider, eventId } = eventKeyFrom(c.req.url);
    const requested = groupQuery(c.req.query()).group;
    const group = groupFor(principal, requested);
    // A principal limited to some groups sees only their part of an event (their effects, attempts and group
    // rows), and no event of a type none of them has an effect for; a named group narrows it to that group's part.
    const visibleTo = requested === undefined ? (principal.groups ?? undefined) : [group];
    const found = await getEvent(pool, provider, eventId, { group, visibleTo });
    if (!found) throw new AdminError('not_found', `no ${provider} event ${eventId}`);
    // A viewer reads an event's facts, not its customer's data.
    const event = can(principal.role, 'read_payload')
      ? found
      : { ...found, payload: null, payloadHidden: true };
    // Shopify ids above 2^53 are bigint: keep their digits as strings.
    return c.body(
      JSON.stringify(event, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
      200,
      { 'content-type': 'application/json' },
    );
  });

  admin.post(
    '/events/:provider/*',
    bodyLimit({
      maxSize: REPLAY_BODY_LIMIT,
      onError: () => {
        throw new PayloadTooLargeError(REPLAY_BODY_LIMIT);
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const { provider, eventId } = eventKeyFrom(c.req.url, true);
      const { forceEffect, group = DEFAULT_GROUP } = replayOptions(await c.req.text());
      // Refused before anything is read or changed.
      requirePermission(principal, forceEffect === undefined ? 'replay' : 'force');
      requireGroup(principal, group);
      await requireVisible(principal, provider, eventId);
      const deps = await groupReplayDeps(pool, boss, group);
      const result = await replayEvent(deps, provider, eventId, { forceEffect, group, auditAs: principal });
      logger.info(
        {
          provider,
          eventId,
          group,
          forced: result.forced,
          enqueued: result.enqueued,
          actor: principal.actor,
        },
        'admin replay',
      );
      return c.json(result, 202);
    },
  );

  return admin;
}

/** The `group` of a `show` or `stats` query, the only parameter they take (400 `invalid_request` otherwise). */
function groupQuery(query: Record<string, string>): { group?: string | undefined } {
  const parsed = GROUP_QUERY.safeParse(query);
  if (!parsed.success) throw new AdminError('invalid_request', firstIssue(parsed.error));
  return parsed.data;
}

/**
 * The provider and event key from `.../events/<provider>/<key>` (then `/replay` for a replay), each URL-decoded
 * once from the request's own URL, so an encoded `/` in a Shopify key and a literal one read the same.
 */
function eventKeyFrom(url: string, replay = false): { provider: string; eventId: string } {
  const match = /\/events\/([^/]*)\/(.*)$/.exec(new URL(url).pathname);
  const key = match?.[2];
  if (!match || key === undefined || (replay && !key.endsWith('/replay'))) {
    throw new AdminError('not_found', 'no such route; replay is POST /admin/events/:provider/:id/replay');
  }
  return {
    provider: decode('provider', match[1]!, providerName),
    eventId: decode('event id', replay ? key.slice(0, -'/replay'.length) : key, text(MAX_LOOKUP_KEY_LENGTH)),
  };
}

function decode(what: string, raw: string, schema: z.ZodType<string>): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw new AdminError('invalid_request', `${what}: not valid percent-encoding`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AdminError('invalid_request', `${what}: ${firstIssue(parsed.error)}`);
  return parsed.data;
}

/** The replay body: empty, or a JSON object with nothing but an optional `forceEffect` name and `group`. */
function replayOptions(body: string): { forceEffect?: string; group?: string } {
  if (body.trim() === '') return {};
  return jsonBody(body, REPLAY_BODY, '{"forceEffect":"<name>","group":"<group>"} (both optional) or nothing');
}
