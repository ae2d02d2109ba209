import { queuesOf } from '@webhook-inbox/inbox/queue';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRoleMap } from '../src/auth/role-map.ts';
import {
  consoleOidc,
  signInOverHttp,
  startIdentityProvider,
  TEAM_ROLE_MAPPING,
  type IdentityProvider,
} from './identity-provider.ts';
import { login, sessionClient, startStack, type Client, type Stack } from './support.ts';
import {
  BILLING_DEAD,
  CRM_ERROR,
  DEFAULT_DEAD,
  DEFAULT_ONLY,
  insertTeams,
  LEDGER_ERROR,
  PLANTED_EMAIL,
} from './teams.ts';

// Every team first-class: the pages by consumer group, a role limited to its group, the event page's statuses side
// by side with a replay per group, and a viewer's masked subjects and errors.

const db = useTestDatabase();
let idp: IdentityProvider;
let stack: Stack;
let admin: Client;

const ids = (page: string) =>
  [...page.matchAll(/event\?provider=stripe&amp;id=(evt_team_[a-z_]+)/g)].map((m) => m[1]);
const deadCount = (page: string) => /data-count="dead">([\d,]+)</.exec(page)?.[1];

async function signedIn(name: string): Promise<Client> {
  const { session } = await signInOverHttp(stack.url, name);
  if (!session) throw new Error(`${name} got no session`);
  return sessionClient(stack.url, session);
}

beforeAll(async () => {
  idp = await startIdentityProvider();
  stack = await startStack(db.url, { oidc: consoleOidc(idp, { roles: parseRoleMap(TEAM_ROLE_MAPPING) }) });
  idp.register(`${stack.url}/login/callback`);
  await insertTeams(stack.pool);
  admin = await login(stack.url);
});
afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
});

describe('the role map', () => {
  it('limits a role to consumer groups, and refuses a group that is not a group name', () => {
    const roles = parseRoleMap('admins=admin,billing=operator@billing+ledger,all=viewer');
    expect(roles.grantFor(['billing'])).toEqual({ role: 'operator', groups: ['billing', 'ledger'] });
    expect(roles.grantFor(['billing', 'all'])).toEqual({ role: 'operator', groups: ['billing', 'ledger'] });
    expect(roles.grantFor(['admins', 'billing'])).toEqual({ role: 'admin', groups: null });
    expect(() => parseRoleMap('x=operator@Billing')).toThrow(TypeError);
  });
});

describe('pages by consumer group', () => {
  it('counts and lists dead letters of the chosen group, remembers it, and of every group with all groups', async () => {
    const billing = await admin.get('/dead?group=billing');
    expect(ids(await billing.text())).toEqual([BILLING_DEAD]);
    const remembered = billing.headers.getSetCookie().find((c) => c.startsWith('wi_console_group='));
    expect(remembered).toMatch(/^wi_console_group=billing;/);
    const cookie = `${admin.cookie}; ${remembered?.split(';')[0] ?? ''}`;
    expect(ids(await (await admin.get('/dead', { headers: { cookie } })).text())).toEqual([BILLING_DEAD]);
    expect(deadCount(await (await admin.get('/?group=billing')).text())).toBe('1');
    expect(deadCount(await (await admin.get('/?group=default')).text())).toBe('1');

    const all = await (await admin.get('/dead?group=')).text();
    expect(ids(all).sort()).toEqual([BILLING_DEAD, DEFAULT_DEAD].sort());
    expect(deadCount(await (await admin.get('/?group=')).text())).toBe('2');
  });

  it('answers an unknown group 400 unknown_group on every page, never 500', async () => {
    for (const path of ['/dead', '/', '/events', '/failures']) {
      const response = await admin.get(`${path}?group=nope`);
      expect(response.status, path).toBe(400);
      expect(await response.text(), path).toContain('unknown_group');
    }
  });

  it("shows an event's status in each group side by side and replays the chosen group's effects", async () => {
    const page = await (await admin.get(`/event?provider=stripe&id=${BILLING_DEAD}`)).text();
    expect(page).toMatch(
      /data-group="default">\s*<td class="id">default<\/td>\s*<td><span class="badge status-processed">/,
    );
    expect(page).toMatch(
      /data-group="billing">\s*<td class="id">billing<\/td>\s*<td><span class="badge status-dead">/,
    );
    expect(page).toContain('name="group" value="billing"');

    const replay = await admin.post('/event/replay', {
      _csrf: admin.csrf,
      provider: 'stripe',
      id: BILLING_DEAD,
      group: 'billing',
    });
    expect(replay.status).toBe(303);
    const location = new URL(replay.headers.get('location') ?? '', stack.url);
    expect(location.searchParams.get('replayed')).toBe('Replay queued in billing: syncLedger will run.');
    const { rows: jobs } = await stack.pool.query(
      `select 1 from pgboss.job where name = $1 and data->>'eventId' = $2`,
      [queuesOf('billing').events, BILLING_DEAD],
    );
    expect(jobs).toHaveLength(1);
    const { rows: groupRows } = await stack.pool.query<{ status: string }>(
      `select status from webhook_event_groups where event_id = $1 and consumer_group = 'billing'`,
      [BILLING_DEAD],
    );
    expect(groupRows).toEqual([{ status: 'received' }]);
    const { rows: audited } = await stack.pool.query<{ group: string }>(
      `select details->>'group' as group from audit_log where action = 'replay' and target like $1`,
      [`%${BILLING_DEAD}%`],
    );
    expect(audited).toEqual([{ group: 'billing' }]);
    await stack.pool.query(
      `update webhook_event_groups set status = 'dead' where event_id = $1 and consumer_group = 'billing'`,
      [BILLING_DEAD],
    );
  });
});

describe('a role limited to its consumer group', () => {
  it('sees only its group: lists, counts, failures, the event page; another group is refused 400', async () => {
    const bill = await signedIn('bill');
    expect(ids(await (await bill.get('/dead')).text())).toEqual([BILLING_DEAD]);
    const overview = await (await bill.get('/')).text();
    expect(deadCount(overview)).toBe('1');
    expect(overview).not.toContain('notifyCrm');
    const failures = await (await bill.get('/failures')).text();
    expect(failures).toContain('syncLedger');
    expect(failures).not.toContain('notifyCrm');
    expect(ids(await (await bill.get('/events?status=dead')).text())).toEqual([BILLING_DEAD]);

    const event = await (await bill.get(`/event?provider=stripe&id=${DEFAULT_DEAD}`)).text();
    // Its one group's replay alone (processed in billing), nothing of the default group's effects or errors.
    expect(event).toContain('Processed: every effect completed, nothing to replay.');
    expect(event).not.toContain('data-group="default"');
    expect(event).not.toContain('notifyCrm');
    expect(event).not.toContain(CRM_ERROR);
    expect((await bill.get(`/event?provider=stripe&id=${DEFAULT_ONLY}`)).status).toBe(404);

    expect((await bill.get('/dead?group=default')).status).toBe(400);
    const refused = await bill.post('/event/replay', {
      _csrf: bill.csrf,
      provider: 'stripe',
      id: DEFAULT_DEAD,
      group: 'default',
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('unknown_group');
    const { rows } = await stack.pool.query(
      `select 1 from audit_log where action = 'replay' and actor = 'bill@example.com'`,
    );
    expect(rows).toEqual([]);
  });
});

describe('a viewer', () => {
  it('sees no subject and no error text, cannot search subjects, and has no API tokens in its navigation', async () => {
    const vic = await signedIn('vic');
    for (const path of [
      '/',
      '/events',
      '/dead?group=',
      '/failures',
      `/event?provider=stripe&id=${DEFAULT_DEAD}`,
      `/event?provider=stripe&id=${BILLING_DEAD}`,
    ]) {
      const page = await (await vic.get(path)).text();
      expect(page, path).not.toContain(PLANTED_EMAIL);
      expect(page, path).not.toContain(LEDGER_ERROR);
      expect(page, path).not.toContain('API tokens');
    }
    expect(ids(await (await vic.get(`/events?q=${PLANTED_EMAIL}`)).text())).toEqual([]);
    expect(ids(await (await admin.get(`/events?q=${PLANTED_EMAIL}`)).text()).length).toBeGreaterThan(0);
    expect(await (await admin.get('/events')).text()).toContain(CRM_ERROR);
    expect(await (await admin.get('/')).text()).toContain('API tokens');
  });
});

describe('the overview over all groups', () => {
  it('counts an event dead in two groups once, as the dead letters list it', async () => {
    const before = Number(deadCount(await (await admin.get('/?group=')).text()));
    await stack.pool.query(
      `insert into webhook_events (provider, event_id, type, status, attempts, last_error)
       values ('stripe', 'evt_team_dead_twice', 'checkout.session.completed', 'dead', 3, 'notifyCrm: down');
       insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
       values ('stripe', 'evt_team_dead_twice', 'billing', 'dead', 6, 'syncLedger: down')`,
    );
    const all = await (await admin.get('/?group=')).text();
    expect(deadCount(all)).toBe(String(before + 1));
    const listed = ids(await (await admin.get('/dead?group=')).text());
    expect(listed).toContain('evt_team_dead_twice');
    expect(listed).toHaveLength(before + 1);
    // Each group's own figure counts it too.
    for (const group of ['default', 'billing']) {
      expect(ids(await (await admin.get(`/dead?group=${group}`)).text())).toContain('evt_team_dead_twice');
      expect(deadCount(await (await admin.get(`/?group=${group}`)).text()), group).toBe(
        String(ids(await (await admin.get(`/dead?group=${group}`)).text()).length),
      );
    }
  });
});

describe('bulk replays and the audit log of a role limited to its group', () => {
  const operationIds = (page: string) =>
    [...page.matchAll(/href="[^"]*\/operations\/(\d+)"/g)].map((m) => Number(m[1])).sort();
  const auditGroups = (page: string) => [...page.matchAll(/data-group="([^"]*)"/g)].map((m) => m[1]);

  it('each team sees only its own operations and audit rows; an admin of every group sees all', async () => {
    const { rows: operations } = await stack.pool.query<{ id: number; group: string }>(
      `insert into replay_operations (filter, received_up_to, total, created_by)
       values ('{"group":"billing","status":"dead"}', now(), 1, 'bill@example.com'),
              ('{"status":"dead"}', now(), 1, 'dee@example.com')
       returning id::int, coalesce(filter->>'group', 'default') as group`,
    );
    const billingOp = operations.find((o) => o.group === 'billing')!.id;
    const defaultOp = operations.find((o) => o.group === 'default')!.id;

    const bill = await signedIn('bill');
    const dee = await signedIn('dee');
    // A replay each, in its own group: audited with that group.
    for (const [client, id, group] of [
      [bill, BILLING_DEAD, 'billing'],
      [dee, DEFAULT_DEAD, 'default'],
    ] as const) {
      const replay = await client.post('/event/replay', {
        _csrf: client.csrf,
        provider: 'stripe',
        id,
        group,
      });
      expect(replay.status, group).toBe(303);
    }

    expect(operationIds(await (await bill.get('/operations')).text())).toEqual([billingOp]);
    expect(operationIds(await (await dee.get('/operations')).text())).toEqual([defaultOp]);
    expect(operationIds(await (await admin.get('/operations?group=')).text())).toEqual(
      [billingOp, defaultOp].sort(),
    );
    expect((await bill.get(`/operations/${defaultOp}`)).status).toBe(404);
    expect((await bill.get(`/operations/${billingOp}`)).status).toBe(200);
    const cancel = await bill.post(`/operations/${defaultOp}/cancel`, { _csrf: bill.csrf });
    expect(cancel.status).toBe(404);

    const billAudit = await (await bill.get('/audit')).text();
    expect(billAudit).toContain(`stripe ${BILLING_DEAD}`);
    expect(billAudit).not.toContain(`stripe ${DEFAULT_DEAD}`);
    expect(new Set(auditGroups(billAudit))).toEqual(new Set(['billing']));
    const deeAudit = await (await dee.get('/audit')).text();
    expect(deeAudit).toContain(`stripe ${DEFAULT_DEAD}`);
    expect(new Set(auditGroups(deeAudit))).toEqual(new Set(['default']));

    // Every row for an admin of every group: both teams', and the sign-ins of no group.
    const all = auditGroups(await (await admin.get('/audit?group=')).text());
    expect(new Set(all)).toEqual(new Set(['billing', 'default', '']));
    const { rows } = await stack.pool.query<{ n: number }>(`select count(*)::int as n from audit_log`);
    expect(all).toHaveLength(Math.min(rows[0]!.n, 100));
    expect(new Set(auditGroups(await (await admin.get('/audit?group=billing')).text()))).toEqual(
      new Set(['billing']),
    );
  });
});
