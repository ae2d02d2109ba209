import {
  createApiToken,
  listApiTokens,
  parseTokenRequest,
  revokeApiToken,
  TOKEN_NAME,
  type ApiTokenRow,
} from '@webhook-inbox/operator/access/tokens';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type pg from 'pg';
import { PayloadTooLargeError } from '@webhook-inbox/inbox/errors';
import type { AdminEnv } from './access.ts';
import { AdminError } from '../http/errors.ts';

/** The largest token request read: a name, a role, a few group names and a number. */
const TOKEN_BODY_LIMIT = 8 * 1024;

/** A token as the API answers it: its row, dates as ISO text; never its hash. */
const shown = (row: ApiTokenRow) => ({
  ...row,
  status: row.revokedAt ? 'revoked' : row.expiresAt.getTime() <= Date.now() ? 'expired' : 'active',
});

/**
 * `/admin/tokens`, admin only (`manage_tokens`; refusals 403 `forbidden` from tokens.ts): `GET` lists every token,
 * `POST {"name","role","groups"?,"expiresInDays"?}` creates one and answers it once (201, `token`), `DELETE
 * /admin/tokens/<name>` revokes one. Creations and revocations are audited in their transaction, with the caller as
 * actor.
 *
 * @example
 * curl -X POST -H "authorization: Bearer $ADMIN_TOKEN" -H 'content-type: application/json' \
 *   -d '{"name":"billing-ci","role":"operator","groups":["billing"],"expiresInDays":30}' \
 *   http://127.0.0.1:3002/admin/tokens
 */
export function tokenRoutes(pool: pg.Pool): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get('/', async (c) =>
    c.json({ tokens: (await listApiTokens(pool, c.get('principal'))).map(shown) }),
  );

  routes.post(
    '/',
    bodyLimit({
      maxSize: TOKEN_BODY_LIMIT,
      onError: () => {
        throw new PayloadTooLargeError(TOKEN_BODY_LIMIT);
      },
    }),
    async (c) => {
      let body: unknown;
      try {
        body = JSON.parse(await c.req.text());
      } catch {
        throw new AdminError(
          'invalid_request',
          'send a JSON object {"name","role","groups","expiresInDays"}',
        );
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new AdminError(
          'invalid_request',
          'send a JSON object {"name","role","groups","expiresInDays"}',
        );
      }
      const { token, row } = await createApiToken(pool, c.get('principal'), parseTokenRequest(body));
      return c.json({ ...shown(row), token }, 201);
    },
  );

  routes.delete('/:name', async (c) => {
    const name = c.req.param('name');
    if (!TOKEN_NAME.test(name)) throw new AdminError('invalid_request', 'not a token name');
    return c.json(shown(await revokeApiToken(pool, c.get('principal'), name)));
  });

  return routes;
}
