import { EVENT_STATUSES } from '@webhook-inbox/db/statuses';
import { PayloadTooLargeError } from '@webhook-inbox/inbox/errors';
import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import { auditBulkReplay } from '@webhook-inbox/operator/audit';
import { replayEvents } from '@webhook-inbox/operator/bulk-replay';
import { MAX_EVENT_FIELD_LENGTH } from '@webhook-inbox/providers';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { requirePermission, type AdminEnv } from './access.ts';
import { groupFor, groupReplayDeps } from './groups.ts';
import { groupName, jsonBody, providerName, sinceText, text } from './params.ts';
import { AdminError } from '../http/errors.ts';
import type { Logger } from '../logger.ts';

/** The most events one request replays; `remaining` counts the rest, which the same request, sent again, takes. */
export const MAX_BULK_REPLAY = 1000;
/** The largest body read: a handful of short fields. */
const BODY_LIMIT = 16 * 1024;

const BULK_BODY = z
  .strictObject({
    group: groupName.optional(),
    status: z.enum(EVENT_STATUSES, { error: `must be one of ${EVENT_STATUSES.join(', ')}` }).optional(),
    provider: providerName.optional(),
    type: text(MAX_EVENT_FIELD_LENGTH).optional(),
    since: sinceText.optional(),
    effect: text(MAX_EVENT_FIELD_LENGTH).optional(),
    fingerprint: text(MAX_EVENT_FIELD_LENGTH).optional(),
    limit: z
      .number({ error: `must be a whole number from 1 to ${MAX_BULK_REPLAY}` })
      .int({ error: `must be a whole number from 1 to ${MAX_BULK_REPLAY}` })
      .min(1, { error: `must be from 1 to ${MAX_BULK_REPLAY}` })
      .max(MAX_BULK_REPLAY, { error: `must be from 1 to ${MAX_BULK_REPLAY}` })
      .optional(),
    dryRun: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((body) => (body.effect === undefined) === (body.fingerprint === undefined), {
    error: 'effect and fingerprint go together: a failure group',
  });

/**
 * `POST /admin/replay`: a bulk replay in one consumer group, what `webhook-inbox replay --group G [--status S]
 * [--effect E --fingerprint F] [--dry-run] --url --token` sends. The body names the group (absent: as a list's
 * `group=`, groups.ts) and the filter: `status`, `provider`, `type`, `since` (`24h` or an ISO time), `effect` with
 * `fingerprint` (a failure group); the default group's replay needs a status or a failure group. The events
 * matching it, received before the request, are replayed oldest first as the single replay does (only effects
 * that have not completed run), at most `limit` (default and most: `MAX_BULK_REPLAY`); `dryRun` changes nothing
 * and says what would run. Needs `replay`; a group outside the token's is 403 `forbidden`, a bad body 400
 * `invalid_request`. Each replayed event writes its `replay` audit row, and the request one `bulk_replay` row, with
 * the token as actor.
 *
 * @example
 * curl -X POST -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
 *   -d '{"group":"billing","status":"dead","dryRun":true}' http://127.0.0.1:3002/admin/replay
 */
export function bulkReplayRoutes(pool: pg.Pool, boss: PgBoss, logger: Logger): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();
  routes.post(
    '/',
    bodyLimit({
      maxSize: BODY_LIMIT,
      onError: () => {
        throw new PayloadTooLargeError(BODY_LIMIT);
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      requirePermission(principal, 'replay');
      const body = jsonBody(await c.req.text(), BULK_BODY, '{"group":"<group>","status":"failed",...}');
      const group = groupFor(principal, body.group);
      const { status, provider, type, since, effect, fingerprint, dryRun = false } = body;
      const failure = effect !== undefined && fingerprint !== undefined ? { effect, fingerprint } : undefined;
      if (status === undefined && failure === undefined && group === DEFAULT_GROUP) {
        throw new AdminError(
          'invalid_request',
          "the default group's bulk replay needs a status or a failure group (effect and fingerprint)",
        );
      }
      const limit = body.limit ?? MAX_BULK_REPLAY;
      const deps = await groupReplayDeps(pool, boss, group);
      const result = await replayEvents(
        deps,
        { status, provider, type, since, failure },
        { group, dryRun, limit, auditAs: principal },
      );
      if (!dryRun) {
        const filter = { status, provider, type, since: since?.toISOString(), group, effect, fingerprint };
        await auditBulkReplay(pool, principal, { filter, limit: body.limit }, result);
      }
      logger.info(
        {
          group,
          dryRun,
          total: result.total,
          replayed: result.results.length,
          remaining: result.remaining,
          actor: principal.actor,
        },
        'admin bulk replay',
      );
      return c.json({ group, dryRun, ...result }, dryRun ? 200 : 202);
    },
  );
  return routes;
}
