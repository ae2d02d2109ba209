import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/access/roles.ts';
import {
  createApiToken,
  findApiToken,
  hashToken,
  listApiTokens,
  parseTokenRequest,
  revokeApiToken,
  TokenError,
} from '../../src/access/tokens.ts';
import { auditLog } from '../../src/sql/index.ts';

// API tokens and the append-only audit log on a real database: rows, hashes, audit rows in the same transaction,
// the trigger refusing UPDATE/DELETE/TRUNCATE and letting only audit_log_purge remove old rows.

const db = useTestDatabase();
let pool: pg.Pool;
const ADMIN: Principal = {
  actor: 'ops@example.com',
  role: 'admin',
  method: 'oidc',
  groups: null,
  address: '10.0.0.1',
};

beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: 4 });
});
afterAll(async () => {
  await pool.end();
});

const codeOf = async (work: Promise<unknown>) => {
  try {
    await work;
  } catch (error) {
    if (error instanceof TokenError) return error.code;
    throw error;
  }
  return 'ok';
};

const auditRows = async (target: string) =>
  (
    await pool.query<{
      actor: string;
      role: string;
      auth_method: string;
      action: string;
      remote_address: string;
    }>(
      `select actor, role, auth_method, action, remote_address from audit_log where target = $1 order by id`,
      [target],
    )
  ).rows;

describe('API tokens', () => {
  it('stores only the hash, shows the token once, audits creation and revocation with the admin as actor', async () => {
    const { token, row } = await createApiToken(
      pool,
      ADMIN,
      parseTokenRequest({ name: 'billing-ci', role: 'operator', groups: ['billing'], expiresInDays: 30 }),
    );
    expect(token).toMatch(/^whi_[A-Za-z0-9_-]{43}$/);
    const stored = await pool.query<{ hash: string; groups: string[]; created_by: string }>(
      `select hash, groups, created_by from api_tokens where id = $1`,
      [row.id],
    );
    expect(stored.rows[0]).toEqual({
      hash: hashToken(token),
      groups: ['billing'],
      created_by: 'ops@example.com',
    });
    expect(JSON.stringify(stored.rows)).not.toContain(token);

    expect((await findApiToken(pool, token))?.name).toBe('billing-ci');
    const used = await pool.query<{ last_used_at: Date | null }>(
      `select last_used_at from api_tokens where id = $1`,
      [row.id],
    );
    expect(used.rows[0]?.last_used_at).toBeInstanceOf(Date);
    expect(await findApiToken(pool, `${token}x`)).toBeUndefined();
    expect(await findApiToken(pool, 'not-a-whi-token')).toBeUndefined();

    expect(
      await codeOf(createApiToken(pool, ADMIN, parseTokenRequest({ name: 'billing-ci', role: 'viewer' }))),
    ).toBe('token_exists');
    await revokeApiToken(pool, ADMIN, 'billing-ci');
    expect(await codeOf(findApiToken(pool, token))).toBe('token_revoked');
    expect(await codeOf(revokeApiToken(pool, ADMIN, 'billing-ci'))).toBe('not_found');
    expect(await auditRows('token billing-ci')).toEqual([
      {
        actor: 'ops@example.com',
        role: 'admin',
        auth_method: 'oidc',
        action: 'token_created',
        remote_address: '10.0.0.1',
      },
      {
        actor: 'ops@example.com',
        role: 'admin',
        auth_method: 'oidc',
        action: 'token_revoked',
        remote_address: '10.0.0.1',
      },
    ]);
    const listed = await listApiTokens(pool, ADMIN);
    expect(listed.find((t) => t.name === 'billing-ci')).toMatchObject({ revokedBy: 'ops@example.com' });
  });

  it('refuses an expired token, a non-admin manager, and a scoped admin widening the scope', async () => {
    const { token, row } = await createApiToken(
      pool,
      ADMIN,
      parseTokenRequest({ name: 'short', role: 'viewer' }),
    );
    // The clock of the test cannot move the database's: the row's expiry is moved back instead.
    await pool.query(`update api_tokens set expires_at = now() - interval '1 second' where id = $1`, [
      row.id,
    ]);
    expect(await codeOf(findApiToken(pool, token))).toBe('token_expired');

    const operator: Principal = { ...ADMIN, role: 'operator' };
    expect(
      await codeOf(createApiToken(pool, operator, parseTokenRequest({ name: 'x', role: 'viewer' }))),
    ).toBe('forbidden');
    expect(await codeOf(listApiTokens(pool, operator))).toBe('forbidden');
    const scoped: Principal = { ...ADMIN, groups: ['billing'] };
    for (const groups of [null, ['billing', 'default']]) {
      expect(
        await codeOf(createApiToken(pool, scoped, parseTokenRequest({ name: 'y', role: 'viewer', groups }))),
      ).toBe('forbidden');
    }
    expect(
      await codeOf(
        createApiToken(pool, scoped, parseTokenRequest({ name: 'y', role: 'viewer', groups: ['billing'] })),
      ),
    ).toBe('ok');
    for (const bad of [
      { name: 'Bad Name', role: 'viewer' },
      { name: 'ok', role: 'root' },
      { name: 'ok', role: 'viewer', groups: [] },
      { name: 'ok', role: 'viewer', groups: ['no spaces'] },
      { name: 'ok', role: 'viewer', expiresInDays: 0 },
      { name: 'ok', role: 'viewer', expiresInDays: 10_000 },
    ]) {
      expect(() => parseTokenRequest(bad), JSON.stringify(bad)).toThrow(TokenError);
    }
  });
});

describe('audit_log', () => {
  it('refuses UPDATE, DELETE and TRUNCATE; audit_log_purge removes only rows older than 90 days', async () => {
    await pool.query(
      auditLog.insertAudit(ADMIN, { action: 'test_action', target: 'append-only', details: { n: 1 } }),
    );
    for (const statement of [
      `update audit_log set actor = 'someone else' where target = 'append-only'`,
      `delete from audit_log where target = 'append-only'`,
      `truncate audit_log`,
    ]) {
      await expect(pool.query(statement), statement).rejects.toMatchObject({ code: '42501' });
    }
    // The purge's setting raised by hand lets no recent row go either.
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`set local webhook_inbox.audit_purge = 'on'`);
      await expect(client.query(`delete from audit_log where target = 'append-only'`)).rejects.toMatchObject({
        code: '42501',
      });
    } finally {
      await client.query('rollback');
      client.release();
    }
    await expect(pool.query(auditLog.purgeAudit(30))).rejects.toMatchObject({ code: '22023' });

    // An old row, inserted with its time (the column's default is only a default): the purge removes it alone.
    await pool.query(
      `insert into audit_log (at, actor, action, target) values (now() - interval '400 days', 'old', 'login', 'old-row')`,
    );
    const { rows } = await pool.query<{ removed: string }>(auditLog.purgeAudit(365));
    expect(Number(rows[0]?.removed)).toBe(1);
    expect(await auditRows('old-row')).toEqual([]);
    expect(await auditRows('append-only')).toHaveLength(1);
    // The setting does not outlive the purge's transaction.
    await expect(pool.query(`delete from audit_log where target = 'append-only'`)).rejects.toMatchObject({
      code: '42501',
    });
  });
});
