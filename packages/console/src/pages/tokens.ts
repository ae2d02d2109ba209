import {
  createApiToken,
  DEFAULT_TOKEN_DAYS,
  listApiTokens,
  MAX_TOKEN_DAYS,
  parseTokenRequest,
  revokeApiToken,
  TOKEN_NAME,
  TokenError,
  type ApiTokenRow,
} from '@webhook-inbox/operator/access/tokens';
import { html } from 'hono/html';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { ConsoleError } from '../errors.ts';
import { utc } from '../views/format.ts';
import { csrfField, layout } from '../views/layout.ts';

/** A refused token operation as the console's own error (same code where the console has one). */
async function asConsoleError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    const code =
      error.code === 'token_exists'
        ? 'conflict'
        : error.code === 'forbidden'
          ? 'forbidden'
          : error.code === 'not_found'
            ? 'not_found'
            : 'invalid_input';
    throw new ConsoleError(code, error.message, { cause: error });
  }
}

const statusOf = (row: ApiTokenRow, now: Date) =>
  row.revokedAt ? 'revoked' : row.expiresAt <= now ? 'expired' : 'active';

/**
 * API tokens (admin only, `manage_tokens`): every token with its role, groups, expiry and last use; a form to
 * create one (shown once, on the answer page) and a button to revoke one. Each change is audited in its
 * transaction, with the signed-in operator as actor.
 */
export function tokensPage(app: ConsoleApp, services: ConsoleServices): void {
  const page = async (c: ConsoleContext, created?: { name: string; token: string }) => {
    const tokens = await asConsoleError(() => listApiTokens(services.pool, c.get('principal')));
    const now = services.now();
    return c.html(
      layout({
        base: services.base,
        title: 'API tokens',
        section: 'tokens',
        session: pageSession(c),
        body: html`<h1>API tokens</h1>
          ${
            created
              ? html`<div class="notice" role="status">
                  <p>Token <strong>${created.name}</strong>, shown this once: store it now.</p>
                  <pre class="cli"><code>${created.token}</code></pre>
                </div>`
              : ''
          }
          <form method="post" action="${services.base}/tokens" class="filters">
            ${csrfField(c.get('csrf'))}
            <label
              >name <input name="name" required pattern="${TOKEN_NAME.source.slice(1, -1)}" maxlength="63"
            /></label>
            <label
              >role
              <select name="role">
                <option>viewer</option>
                <option selected>operator</option>
                <option>admin</option>
              </select></label
            >
            <label>groups <input name="groups" placeholder="all; or billing,shipping" /></label>
            <label
              >expires in days
              <input
                name="expiresInDays"
                type="number"
                min="1"
                max="${MAX_TOKEN_DAYS}"
                value="${DEFAULT_TOKEN_DAYS}"
            /></label>
            <button type="submit">Create token</button>
          </form>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Groups</th>
                  <th scope="col">Status</th>
                  <th scope="col">Expires (UTC)</th>
                  <th scope="col">Last used (UTC)</th>
                  <th scope="col">Created by</th>
                  <th scope="col"></th>
                </tr>
              </thead>
              <tbody>
                ${tokens.map(
                  (t) =>
                    html`<tr>
                      <td>
                        <a href="${services.base}/audit?actor=${encodeURIComponent(`token:${t.name}`)}"
                          >${t.name}</a
                        >
                      </td>
                      <td>${t.role}</td>
                      <td>${t.groups?.join(', ') ?? 'all'}</td>
                      <td>${statusOf(t, now)}</td>
                      <td class="nowrap">${utc(t.expiresAt)}</td>
                      <td class="nowrap">${utc(t.lastUsedAt)}</td>
                      <td>${t.createdBy}</td>
                      <td>
                        ${
                          t.revokedAt
                            ? ''
                            : html`<form
                                method="post"
                                action="${services.base}/tokens/${t.name}/revoke"
                                class="inline"
                              >
                                ${csrfField(c.get('csrf'))}
                                <button type="submit">Revoke</button>
                              </form>`
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`,
      }),
    );
  };

  app.get('/tokens', (c) => page(c));

  app.post('/tokens', async (c) => {
    const form = await c.req.parseBody();
    const text = (key: string) => (typeof form[key] === 'string' ? form[key].trim() : '');
    const groups = text('groups')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean);
    const days = text('expiresInDays');
    const { token, row } = await asConsoleError(async () =>
      createApiToken(
        services.pool,
        c.get('principal'),
        parseTokenRequest({
          name: text('name'),
          role: text('role'),
          groups: groups.length > 0 ? groups : null,
          expiresInDays: days === '' ? undefined : Number(days),
        }),
      ),
    );
    c.status(201);
    return page(c, { name: row.name, token });
  });

  app.post('/tokens/:name/revoke', async (c) => {
    const name = c.req.param('name');
    if (!TOKEN_NAME.test(name)) throw new ConsoleError('not_found', 'no such token');
    await asConsoleError(() => revokeApiToken(services.pool, c.get('principal'), name));
    return c.redirect(`${services.base}/tokens`, 303);
  });
}
