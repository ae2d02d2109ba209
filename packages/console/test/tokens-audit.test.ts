import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_GLASS_ACTOR, login, startStack, type Client, type Stack } from './support.ts';

// The console's API tokens page (create shown once, list, revoke; each audited with the operator as actor) and its
// audit page's filters by actor, action and target, each cell a link to its filter.

const db = useTestDatabase();
let stack: Stack;
let ada: Client;
let grace: Client;

beforeAll(async () => {
  stack = await startStack(db.url);
  ada = await login(stack.url, 'Ada');
  grace = await login(stack.url, 'Grace');
});
afterAll(async () => {
  await stack?.stop();
});

const auditRows = async (action: string) =>
  (
    await stack.pool.query<{ actor: string; role: string; auth_method: string; target: string }>(
      `select actor, role, auth_method, target from audit_log where action = $1 order by id`,
      [action],
    )
  ).rows;

/** The audit page's rows as `[actor, action, target]` (each row carries them as data attributes). */
const auditTable = (page: string) =>
  [...page.matchAll(/<tr\s+data-actor="([^"]*)"\s+data-action="([^"]*)"\s+data-target="([^"]*)"\s*>/g)].map(
    (m) => [m[1], m[2], m[3]].map((v) => v!.replaceAll('&amp;', '&').replaceAll('&quot;', '"')),
  );

describe('API tokens page', () => {
  it('creates a token shown once, lists it, revokes it; both changes audited with the operator as actor', async () => {
    const created = await ada.post('/tokens', {
      _csrf: ada.csrf,
      name: 'billing-reports',
      role: 'viewer',
      groups: 'billing, shipping',
      expiresInDays: '30',
    });
    expect(created.status).toBe(201);
    const page = await created.text();
    const token = /<code>(whi_[A-Za-z0-9_-]+)<\/code>/.exec(page)?.[1];
    expect(token).toBeDefined();
    const { rows } = await stack.pool.query<{
      role: string;
      groups: string[];
      created_by: string;
      hash: string;
    }>(`select role, groups, created_by, hash from api_tokens where name = 'billing-reports'`);
    expect(rows).toEqual([
      {
        role: 'viewer',
        groups: ['billing', 'shipping'],
        created_by: BREAK_GLASS_ACTOR,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
      },
    ]);

    const listed = await (await ada.get('/tokens')).text();
    expect(listed).toContain('billing-reports');
    expect(listed).not.toContain(token);

    const taken = await ada.post('/tokens', { _csrf: ada.csrf, name: 'billing-reports', role: 'viewer' });
    expect(taken.status).toBe(409);
    const bad = await ada.post('/tokens', { _csrf: ada.csrf, name: 'Bad Name', role: 'viewer' });
    expect(bad.status).toBe(400);
    const noCsrf = await ada.post('/tokens', { name: 'sneaky', role: 'admin' });
    expect(noCsrf.status).toBe(403);

    const revoked = await grace.post('/tokens/billing-reports/revoke', { _csrf: grace.csrf });
    expect(revoked.status).toBe(303);
    expect((await grace.post('/tokens/billing-reports/revoke', { _csrf: grace.csrf })).status).toBe(404);
    const after = await stack.pool.query(`select revoked_by from api_tokens where name = 'billing-reports'`);
    expect(after.rows).toEqual([{ revoked_by: BREAK_GLASS_ACTOR }]);
    expect(await auditRows('token_created')).toEqual([
      {
        actor: BREAK_GLASS_ACTOR,
        role: 'admin',
        auth_method: 'break_glass',
        target: 'token billing-reports',
      },
    ]);
    expect(await auditRows('token_revoked')).toEqual([
      {
        actor: BREAK_GLASS_ACTOR,
        role: 'admin',
        auth_method: 'break_glass',
        target: 'token billing-reports',
      },
    ]);
  });
});

describe('audit page', () => {
  it('filters by actor, action and target, links each cell to its filter, and refuses a bad filter with 400', async () => {
    const all = auditTable(await (await ada.get('/audit')).text());
    expect(all).toContainEqual([BREAK_GLASS_ACTOR, 'token_created', 'token billing-reports']);
    expect(all).toContainEqual([BREAK_GLASS_ACTOR, 'token_revoked', 'token billing-reports']);

    // Every session here is the break-glass one (the actors of single sign-on: sso.test.ts).
    const byActor = auditTable(
      await (await ada.get(`/audit?actor=${encodeURIComponent(BREAK_GLASS_ACTOR)}`)).text(),
    );
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every(([actor]) => actor === BREAK_GLASS_ACTOR)).toBe(true);
    const byAction = auditTable(await (await ada.get('/audit?action=token_created')).text());
    expect(byAction).toEqual([[BREAK_GLASS_ACTOR, 'token_created', 'token billing-reports']]);
    const byTarget = auditTable(
      await (await ada.get(`/audit?target=${encodeURIComponent('token billing-reports')}`)).text(),
    );
    expect(byTarget.map(([, action]) => action)).toEqual(['token_revoked', 'token_created']);
    const both = auditTable(await (await ada.get('/audit?actor=someone-else&action=token_revoked')).text());
    expect(both).toEqual([]);

    const page = await (await ada.get('/audit?action=token_created')).text();
    // The actor's link keeps the filter already chosen and adds its own.
    expect(page).toContain('href="/console/audit?action=token_created&amp;actor=break-glass%40127.0.0.1"');
    expect(page).toContain('name="action" value="token_created"');

    for (const bad of [
      '/audit?actor=%00',
      `/audit?target=${'x'.repeat(1201)}`,
      '/audit?before=abc',
      '/audit?before=1e30',
    ]) {
      expect((await ada.get(bad)).status, bad).toBe(400);
    }
  });
});
