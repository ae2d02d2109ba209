import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { adminCaller } from './admin-client.ts';
import { memoryLogger, sql } from './helpers.ts';
import { receiverEnv } from '@webhook-inbox/scenarios/receiver';

// An admin token limited to consumer groups manages only the tokens limited to those groups, over real HTTP: the
// others (other groups', groups beyond its own, unscoped ones) are absent from its list and answer 404 to its
// revocation, as a token that does not exist. Attack test: before the scope, it listed every token and revoked
// the unscoped and other groups' ones.

const db = useTestDatabase();
const ADMIN_TOKEN = 'admin-tokens-scope-test-token-0123456789';
let receiver: Receiver;
const call = adminCaller(() => receiver.managementUrl);
const tokens: Record<string, string> = {};

/** Name → groups; all created by the break-glass admin token. */
const MADE: Record<string, string[] | null> = {
  'billing-admin': ['billing'],
  'billing-ci': ['billing'],
  'billing-and-shipping': ['billing', 'shipping'],
  'shipping-ci': ['shipping'],
  'everything-ci': null,
};

const revoked = async () =>
  (
    (await sql(db.url, `select name from api_tokens where revoked_at is not null order by name`)).rows as {
      name: string;
    }[]
  ).map((row) => row.name);

beforeAll(async () => {
  receiver = await startReceiver(parseConfig({ ...receiverEnv(db.url), PORT: '0', ADMIN_TOKEN }), {
    logger: memoryLogger('warn').logger,
  });
  for (const [name, groups] of Object.entries(MADE)) {
    const role = name === 'billing-admin' ? 'admin' : 'operator';
    const created = await call(ADMIN_TOKEN, 'POST', '/tokens', { name, role, groups });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    tokens[name] = created.body.token as string;
  }
});
afterAll(async () => {
  await receiver?.close();
});

describe('an admin token limited to groups', () => {
  it('lists only the tokens limited to its groups (listed every token before)', async () => {
    const listed = await call(tokens['billing-admin']!, 'GET', '/tokens');
    expect(listed.status).toBe(200);
    expect((listed.body.tokens as { name: string }[]).map((t) => t.name)).toEqual([
      'billing-ci',
      'billing-admin',
    ]);
    const all = await call(ADMIN_TOKEN, 'GET', '/tokens');
    expect((all.body.tokens as unknown[]).length).toBe(Object.keys(MADE).length);
  });

  it("refused: revoking an unscoped token, another group's or one beyond its groups is 404 (was revoked)", async () => {
    for (const name of ['everything-ci', 'shipping-ci', 'billing-and-shipping', 'no-such-token']) {
      const answer = await call(tokens['billing-admin']!, 'DELETE', `/tokens/${name}`);
      expect({ status: answer.status, code: answer.body.error?.code }, name).toEqual({
        status: 404,
        code: 'not_found',
      });
    }
    expect(await revoked()).toEqual([]);
    const stillWorks = await call(tokens['everything-ci']!, 'GET', '/events');
    expect(stillWorks.status).toBe(200);
    const audited = await sql(
      db.url,
      `select count(*)::int as n from audit_log where action = 'token_revoked'`,
    );
    expect(audited.rows).toEqual([{ n: 0 }]);
  });

  it('revokes a token within its groups, audited with itself as actor', async () => {
    const answer = await call(tokens['billing-admin']!, 'DELETE', '/tokens/billing-ci');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      name: 'billing-ci',
      status: 'revoked',
      revokedBy: 'token:billing-admin',
    });
    expect(await revoked()).toEqual(['billing-ci']);
    const audited = await sql(
      db.url,
      `select actor, role, auth_method, target from audit_log where action = 'token_revoked'`,
    );
    expect(audited.rows).toEqual([
      { actor: 'token:billing-admin', role: 'admin', auth_method: 'api_token', target: 'token billing-ci' },
    ]);
  });
});
