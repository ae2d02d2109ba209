import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consoleOidc,
  signInOverHttp,
  startIdentityProvider,
  type IdentityProvider,
} from './identity-provider.ts';
import { login, sessionClient, startStack, type Client, type Stack } from './support.ts';

// Failure groups (the failures page, the overview, a group's replay, who may acknowledge and resolve them) and the
// event page's attempt history.

const db = useTestDatabase();
let idp: IdentityProvider;
let stack: Stack;
let client: Client;

const REFUSED = 'connect ECONNREFUSED 127.0.0.1:1025';
const REFUSED_FP = 'connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>';
const unescape = (text: string) =>
  text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>');

/** Events left by a worker as failing: `notifyCrm` failed with `error`. */
async function failing(ids: string[], error: string, status = 'dead'): Promise<void> {
  for (const id of ids) {
    await stack.pool.query(
      `with e as (insert into webhook_events (provider, event_id, type, status, attempts, last_error)
                  values ('stripe', $1, 'checkout.session.completed', $3, 3, 'notifyCrm: ' || $2) returning 1)
       insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
       values ('stripe', $1, 'notifyCrm', 'failed', 3, 'stripe:' || $1 || ':notifyCrm', now(), $2)`,
      [id, error, status],
    );
  }
}

beforeAll(async () => {
  idp = await startIdentityProvider();
  stack = await startStack(db.url, { oidc: consoleOidc(idp) });
  idp.register(`${stack.url}/login/callback`);
  await failing(['evt_r1', 'evt_r2', 'evt_r3'], REFUSED);
  await failing(['evt_m1'], 'the checkout session cs_test_a1B2c3D4e5 has no customer email', 'failed');
  client = await login(stack.url);
});
afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
});

/** A session of `login`, signed in through the identity provider (vic: viewer, olga: operator). */
async function signedIn(login: string): Promise<Client> {
  const { session } = await signInOverHttp(stack.url, login);
  if (!session) throw new Error(`${login} got no session`);
  return sessionClient(stack.url, session);
}

describe('failures page', () => {
  it('lists one group per cause, the largest first, on the page and on the overview', async () => {
    for (const path of ['/failures', '/']) {
      const page = unescape(await (await client.get(path)).text());
      const refused = page.indexOf(REFUSED_FP);
      const email = page.indexOf('the checkout session <id> has no customer email');
      expect(refused).toBeGreaterThan(0);
      expect(email).toBeGreaterThan(refused);
      expect(page).toMatch(/<td class="num">3<\/td>\s*<td class="num">3<\/td>/);
    }
  });

  it("shows a group's events, and resolves it until it fails again", async () => {
    const key = { effect: 'notifyCrm', fingerprint: REFUSED_FP };
    const page = await (await client.get(`/failures/group?${new URLSearchParams(key).toString()}`)).text();
    for (const id of ['evt_r1', 'evt_r2', 'evt_r3']) expect(page).toContain(id);
    expect(page).not.toContain('evt_m1');

    const resolved = await client.post('/failures/resolve', { _csrf: client.csrf, ...key });
    expect(resolved.status).toBe(303);
    expect(unescape(await (await client.get('/failures')).text())).not.toContain(REFUSED_FP);
    expect(unescape(await (await client.get('/failures?state=resolved')).text())).toContain(REFUSED_FP);
    const { rows } = await stack.pool.query(
      `select action from audit_log where action = 'failure_group_resolved'`,
    );
    expect(rows).toHaveLength(1);

    await stack.pool.query(`update failure_groups set resolved_at = now() - interval '1 minute'`);
    await stack.pool.query(`update effect_runs set started_at = now() where event_id = 'evt_r1'`);
    const reopened = unescape(await (await client.get('/failures')).text());
    expect(reopened).toContain(REFUSED_FP);
    expect(reopened).toContain('reopened');
  });

  it('refused: a viewer acknowledges or resolves a group, 403 and nothing changes (was allowed); an operator does, audited', async () => {
    const key = { effect: 'notifyCrm', fingerprint: 'the checkout session <id> has no customer email' };
    const decided = async () =>
      (
        await stack.pool.query<{ acknowledged_by: string | null; resolved_by: string | null }>(
          `select acknowledged_by, resolved_by from failure_groups where effect = $1 and fingerprint = $2`,
          [key.effect, key.fingerprint],
        )
      ).rows;
    const audited = async () =>
      (
        await stack.pool.query<{ action: string; actor: string; role: string }>(
          `select action, actor, role from audit_log where action like 'failure_group_%' and target = $1 order by id`,
          [key.effect],
        )
      ).rows;
    const before = await audited();
    const viewer = await signedIn('vic');
    const groupPage = await (
      await viewer.get(`/failures/group?${new URLSearchParams(key).toString()}`)
    ).text();
    expect(groupPage).toContain('notifyCrm failing');
    expect(groupPage).not.toContain('action="/console/failures/acknowledge"');
    for (const path of ['/failures/acknowledge', '/failures/resolve']) {
      const answer = await viewer.post(path, { _csrf: viewer.csrf, ...key });
      expect(answer.status, path).toBe(403);
      expect(await answer.text()).toContain('forbidden');
    }
    // No decision recorded: no row for the group yet, or (once the minute's fold wrote its first failure) one
    // without a decision.
    expect((await decided()).filter((row) => row.acknowledged_by ?? row.resolved_by)).toEqual([]);
    expect(await audited()).toEqual(before);

    const operator = await signedIn('olga');
    const operatorPage = await (
      await operator.get(`/failures/group?${new URLSearchParams(key).toString()}`)
    ).text();
    expect(operatorPage).toContain('action="/console/failures/acknowledge"');
    const acknowledged = await operator.post('/failures/acknowledge', { _csrf: operator.csrf, ...key });
    expect(acknowledged.status).toBe(303);
    expect(await decided()).toEqual([{ acknowledged_by: 'olga@example.com', resolved_by: null }]);
    expect((await audited()).slice(before.length)).toEqual([
      { action: 'failure_group_acknowledged', actor: 'olga@example.com', role: 'operator' },
    ]);
  });

  it("replays a group's events only, through a bulk replay", async () => {
    const query = new URLSearchParams({ effect: 'notifyCrm', fingerprint: REFUSED_FP }).toString();
    const dry = await (await client.get(`/bulk?${query}`)).text();
    expect(dry).toMatch(/<strong>3<\/strong> events/);
    const upTo = /name="upTo" value="([^"]+)"/.exec(dry)?.[1] ?? '';
    const started = await client.post('/bulk', {
      _csrf: client.csrf,
      effect: 'notifyCrm',
      fingerprint: REFUSED_FP,
      upTo,
    });
    expect(started.status).toBe(303);
    const id = /operations\/(\d+)/.exec(started.headers.get('location') ?? '')?.[1];
    await waitFor(
      async () => {
        const { rows } = await stack.pool.query<{ status: string }>(
          'select status from replay_operations where id = $1',
          [id],
        );
        return rows[0]?.status === 'completed';
      },
      { timeout: 20_000, message: 'the group replay completed' },
    );
    const { rows } = await stack.pool.query<{ event_id: string; status: string }>(
      `select event_id, status from webhook_events where event_id like 'evt_%' order by event_id`,
    );
    const operation = (await (await client.get(`/operations/${id}`)).text()).replace(/\s+/g, ' ');
    expect(operation).toMatch(
      />0 processed, <a href="[^"]+\/events\?outcome=failing" ?>3 still failing or waiting<\/a ?>, 0 dead/,
    );
    const failingNow = await (await client.get(`/operations/${id}/events?outcome=failing`)).text();
    for (const event of ['evt_r1', 'evt_r2', 'evt_r3']) expect(failingNow).toContain(event);
    expect(failingNow).not.toContain('evt_m1');
    expect(Object.fromEntries(rows.map((r) => [r.event_id, r.status]))).toEqual({
      evt_m1: 'failed',
      evt_r1: 'received',
      evt_r2: 'received',
      evt_r3: 'received',
    });
  });
});

describe('event page attempts', () => {
  it('shows each attempt of each effect, and compares two', async () => {
    await stack.startWorker();
    await stack.send('evt_attempts');
    await waitFor(
      async () => {
        const { rows } = await stack.pool.query(
          `select 1 from effect_attempts where event_id = 'evt_attempts' and effect = 'notifyCrm'`,
        );
        return rows.length > 0;
      },
      { timeout: 20_000, message: 'the first attempt recorded' },
    );
    const page = await (await client.get('/event?provider=stripe&id=evt_attempts')).text();
    expect(page).toContain('<h2 id="h-attempts">Attempts</h2>');
    expect(page).toMatch(
      /<td class="num">1<\/td>\s*<td><span class="badge status-failed">failed<\/span><\/td>/,
    );
    expect(page).toContain('CRM unavailable (503)');

    const compare = await (
      await client.get('/event?provider=stripe&id=evt_attempts&a=recordOrder%231&b=notifyCrm%231')
    ).text();
    expect(compare).toContain('A: recordOrder#1');
    expect(compare).toMatch(/<tr class="differs">\s*<th scope="row">outcome/);
  });
});
