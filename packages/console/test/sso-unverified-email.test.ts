import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRoleMap } from '../src/auth/role-map.ts';
import {
  consoleOidc,
  signInOverHttp,
  startIdentityProvider,
  type IdentityProvider,
} from './identity-provider.ts';
import { startStack, type Stack } from './support.ts';

/**
 * An email the identity provider has not verified is no identity: with `OIDC_ROLE_CLAIM=email` it maps no role (the
 * sign-in is refused, 403 `email_unverified`), and with any claim it never names the audit actor (the issuer's
 * subject does). Accounts of a real oidc-provider whose `email_verified` is false, absent or the string "false".
 * Attack tests: before the check, eve, abe and stu signed in as admins by email and were audited under the address.
 */
const db = useTestDatabase();
let idp: IdentityProvider;
let byEmail: Stack;
let byGroup: Stack;

const UNVERIFIED = ['eve', 'abe', 'stu'];
const EMAIL_ROLES = ['ada', ...UNVERIFIED].map((login) => `${login}@example.com=admin`).join(',');

async function auditRows(stack: Stack, action: string) {
  const { rows } = await stack.pool.query<{ actor: string; role: string | null; details: unknown }>(
    `select actor, role, details from audit_log where action = $1 order by id`,
    [action],
  );
  return rows;
}

describe('single sign-on with an unverified email', () => {
  beforeAll(async () => {
    idp = await startIdentityProvider();
    byEmail = await startStack(db.url, {
      oidc: consoleOidc(idp, { roleClaim: 'email', roles: parseRoleMap(EMAIL_ROLES), scopes: undefined }),
    });
    byGroup = await startStack(db.url, { oidc: consoleOidc(idp) });
    idp.register(`${byEmail.url}/login/callback`, `${byGroup.url}/login/callback`);
  }, 120_000);

  afterAll(async () => {
    await byEmail?.stop();
    await byGroup?.stop();
    await idp?.stop();
  });

  it('maps a role from an email the provider verified (email_verified: true)', async () => {
    const { callback, session } = await signInOverHttp(byEmail.url, 'ada');
    expect(callback.status).toBe(200);
    expect(session).toBeDefined();
    expect(await auditRows(byEmail, 'login')).toMatchObject([{ actor: 'ada@example.com', role: 'admin' }]);
  });

  it.each(UNVERIFIED)(
    'refused: %s, whose email_verified is false, absent or "false", gets no role from the email (was admin)',
    async (login) => {
      const { callback, session } = await signInOverHttp(byEmail.url, login);
      expect(callback.status).toBe(403);
      expect(await callback.text()).toContain('email_unverified');
      expect(session).toBeUndefined();
      const host = new URL(idp.issuer).host;
      const refused = await auditRows(byEmail, 'login_refused');
      expect(refused.at(-1)).toMatchObject({
        actor: `oidc:${login}@${host}`,
        details: { reason: 'email_unverified', subject: login, unverifiedEmail: `${login}@example.com` },
      });
      expect((await auditRows(byEmail, 'login')).map((row) => row.actor)).not.toContain(
        `${login}@example.com`,
      );
    },
  );

  it.each(UNVERIFIED)(
    'with the groups claim, %s keeps the group role but is audited by subject, not by the unverified email',
    async (login) => {
      const { callback, session } = await signInOverHttp(byGroup.url, login);
      expect(callback.status).toBe(200);
      expect(session).toBeDefined();
      const host = new URL(idp.issuer).host;
      expect((await auditRows(byGroup, 'login')).at(-1)).toMatchObject({
        actor: `oidc:${login}@${host}`,
        role: 'viewer',
      });
    },
  );
});
