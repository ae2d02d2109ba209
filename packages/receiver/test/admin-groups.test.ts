import { insertThreeTeams, TEAM_ERRORS, TEAM_FAILURES, useTestDatabase } from '@webhook-inbox/testing';
import { receiverEnv } from '@webhook-inbox/scenarios/receiver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { adminCaller } from './admin-client.ts';
import { memoryLogger, sql } from './helpers.ts';

// Three teams on one inbox (default, billing, integrations), each with an operator token limited to its group, over
// real HTTP: each lists, shows and counts exactly its own failures with their errors, and nothing of another team's
// (its status, error, effects); a group outside a token's groups is 403, a bad parameter 400, never a 500.

const db = useTestDatabase();
const ADMIN_TOKEN = 'admin-groups-test-token-0123456789';
let receiver: Receiver;
const call = adminCaller(() => receiver.managementUrl);
const tokens: Record<string, string> = {};

const TOKENS: Record<string, string[]> = {
  'default-ops': ['default'],
  'billing-ops': ['billing'],
  'integrations-ops': ['integrations'],
  'two-teams': ['billing', 'integrations'],
};

const ERRORS = TEAM_ERRORS;

beforeAll(async () => {
  receiver = await startReceiver(parseConfig({ ...receiverEnv(db.url), PORT: '0', ADMIN_TOKEN }), {
    logger: memoryLogger('warn').logger,
  });
  await insertThreeTeams({ query: (text) => sql(db.url, text) });
  for (const [name, groups] of Object.entries(TOKENS)) {
    const created = await call(ADMIN_TOKEN, 'POST', '/tokens', { name, role: 'operator', groups });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    tokens[name] = created.body.token as string;
  }
});
afterAll(async () => {
  await receiver?.close();
});

interface Listed {
  eventId: string;
  group: string;
  status: string;
  lastError: string | null;
  groups: { group: string; status: string; lastError: string | null }[];
}

const listed = async (token: string, query: string) => {
  const answer = await call(token, 'GET', `/events?${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.events as Listed[];
};

/** Every other team's error, none of which `text` may contain. */
const othersErrors = (team: keyof typeof ERRORS) =>
  Object.entries(ERRORS).flatMap(([other, error]) => (other === team ? [] : [error.split(': ')[1]!]));

describe('each team lists exactly its own failures', () => {
  for (const [team, status, eventId] of TEAM_FAILURES) {
    const token = `${team}-ops`;
    it(`${team}: status=${status} lists its one event with its own error, nothing of another team's`, async () => {
      const events = await listed(tokens[token]!, `status=${status}`);
      expect(events.map((e) => [e.eventId, e.group, e.status, e.lastError])).toEqual([
        [eventId, team, status, ERRORS[team]],
      ]);
      const all = await listed(tokens[token]!, '');
      const text = JSON.stringify(all);
      for (const error of othersErrors(team)) expect(text).not.toContain(error);
      for (const event of all) {
        expect(event.group).toBe(team);
        expect(event.groups.every((row) => row.group === team)).toBe(true);
      }
      // Its other statuses hold no failure of its own.
      for (const other of ['received', 'processing', 'processed', 'failed', 'dead'].filter(
        (s) => s !== status,
      )) {
        expect((await listed(tokens[token]!, `status=${other}`)).map((e) => e.eventId)).not.toContain(
          eventId,
        );
      }
    });
  }

  it("an event dead in billing never shows the default group's processed to billing", async () => {
    const shown = await call(tokens['billing-ops']!, 'GET', '/events/stripe/evt_inv_billing_dead');
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      group: 'billing',
      status: 'dead',
      attempts: 6,
      lastError: ERRORS.billing,
    });
    expect((shown.body.effects as { effect: string }[]).map((e) => e.effect)).toEqual(['syncLedger']);
    expect(JSON.stringify(shown.body)).not.toContain('sendReceipt');
  });

  it('a principal of every group sees each event with every group row, and names a group to read its part', async () => {
    const all = await listed(ADMIN_TOKEN, '');
    const billingDead = all.find((e) => e.eventId === 'evt_inv_billing_dead');
    expect(billingDead).toMatchObject({ group: 'default', status: 'processed' });
    expect(billingDead?.groups).toMatchObject([
      { group: 'billing', status: 'dead', lastError: ERRORS.billing },
    ]);
    expect(
      (await listed(ADMIN_TOKEN, 'group=billing&status=dead')).map((e) => [e.eventId, e.status]),
    ).toEqual([['evt_inv_billing_dead', 'dead']]);
    const shown = await call(
      ADMIN_TOKEN,
      'GET',
      '/events/stripe/evt_cus_integrations_failed?group=integrations',
    );
    expect(shown.body).toMatchObject({
      group: 'integrations',
      status: 'failed',
      lastError: ERRORS.integrations,
    });
    expect((shown.body.effects as { effect: string }[]).map((e) => e.effect)).toEqual(['pushToSlack']);
  });

  it('a token of two groups names one; both parts, and only theirs', async () => {
    const refused = await call(tokens['two-teams']!, 'GET', '/events');
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
      status: 400,
      code: 'group_required',
    });
    const integrations = await listed(tokens['two-teams']!, 'group=integrations&status=failed');
    expect(integrations.map((e) => [e.eventId, e.lastError])).toEqual([
      ['evt_cus_integrations_failed', ERRORS.integrations],
    ]);
    expect(JSON.stringify(await listed(tokens['two-teams']!, 'group=billing'))).not.toContain('smtp down');
  });

  it('counts its own backlog only', async () => {
    const stats = await call(tokens['billing-ops']!, 'GET', '/stats');
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body).toMatchObject({
      group: 'billing',
      events: { received: 0, processing: 0, failed: 0, dead: 1 },
      groups: [{ group: 'billing', status: 'dead', count: 1 }],
    });
    const everything = await call(ADMIN_TOKEN, 'GET', '/stats');
    expect(everything.body).toMatchObject({ events: { failed: 1 } });
    expect(everything.body.groups).toEqual(
      expect.arrayContaining([
        { group: 'billing', status: 'dead', count: 1 },
        { group: 'integrations', status: 'failed', count: 1 },
      ]),
    );
  });
});

describe('refusals', () => {
  it("403 forbidden for a group outside the token's groups, on every read and on replay", async () => {
    for (const path of [
      '/events?group=default',
      '/events?group=integrations&status=failed',
      '/events/stripe/evt_inv_default_failed?group=default',
      '/stats?group=integrations',
    ]) {
      const answer = await call(tokens['billing-ops']!, 'GET', path);
      expect({ status: answer.status, code: answer.body.error?.code }, path).toEqual({
        status: 403,
        code: 'forbidden',
      });
    }
    const replay = await call(
      tokens['billing-ops']!,
      'POST',
      '/events/stripe/evt_cus_integrations_failed/replay',
      {
        group: 'integrations',
      },
    );
    expect({ status: replay.status, code: replay.body.error?.code }).toEqual({
      status: 403,
      code: 'forbidden',
    });
  });

  it('400 with a stable code for bad parameters, never a 500', async () => {
    for (const [path, code] of [
      ['/events?group=Not%20A%20Group', 'invalid_filter'],
      ['/events?group=%00', 'invalid_filter'],
      ['/events?group=billing&status=lost', 'invalid_filter'],
      ['/events/stripe/evt_inv_billing_dead?group=..', 'invalid_request'],
      ['/events/stripe/evt_inv_billing_dead?colour=red', 'invalid_request'],
      ['/stats?group=a%2Fb', 'invalid_request'],
      ['/stats?since=1h', 'invalid_request'],
    ] as const) {
      const answer = await call(ADMIN_TOKEN, 'GET', path);
      expect({ status: answer.status, code: answer.body.error?.code }, path).toEqual({ status: 400, code });
    }
  });
});

describe('bulk replay of a group (POST /admin/replay)', () => {
  it("a dry run counts the group's matching events and changes nothing", async () => {
    const answer = await call(tokens['integrations-ops']!, 'POST', '/replay', {
      group: 'integrations',
      status: 'failed',
      dryRun: true,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ group: 'integrations', dryRun: true, total: 1, remaining: 0 });
    expect((answer.body.results as { eventId: string }[]).map((r) => r.eventId)).toEqual([
      'evt_cus_integrations_failed',
    ]);
    const audited = await sql(db.url, `select 1 from audit_log where action in ('replay', 'bulk_replay')`);
    expect(audited.rows).toEqual([]);
  });

  it('403 forbidden for another group, 400 with a stable code for a bad body, never a 500', async () => {
    const refused = await call(tokens['billing-ops']!, 'POST', '/replay', {
      group: 'integrations',
      status: 'failed',
      dryRun: true,
    });
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
      status: 403,
      code: 'forbidden',
    });
    const unnamed = await call(tokens['two-teams']!, 'POST', '/replay', { status: 'failed' });
    expect({ status: unnamed.status, code: unnamed.body.error?.code }).toEqual({
      status: 400,
      code: 'group_required',
    });
    for (const body of [
      'not an object',
      { group: 'Not A Group', status: 'failed' },
      { group: 'billing', status: 'lost' },
      { group: 'billing', effect: 'syncLedger' },
      { group: 'default' },
      { group: 'billing', status: 'dead', limit: 0 },
      { group: 'billing', status: 'dead', limit: 1001 },
      { group: 'billing', status: 'dead', since: 'yesterday' },
      { group: 'billing', status: 'dead', dryRun: 'yes' },
      { group: 'billing', status: 'dead', colour: 'red' },
      { group: 'nobody-started', status: 'dead' },
    ]) {
      const answer = await call(ADMIN_TOKEN, 'POST', '/replay', body);
      expect({ status: answer.status, code: answer.body.error?.code }, JSON.stringify(body)).toEqual({
        status: 400,
        code: 'invalid_request',
      });
    }
  });
});

describe('replay for a team', () => {
  it("replays the team's own event in its group, audited with its token, and the list follows", async () => {
    const answer = await call(tokens['billing-ops']!, 'POST', '/events/stripe/evt_inv_billing_dead/replay', {
      group: 'billing',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(answer.body).toMatchObject({ group: 'billing', previousStatus: 'dead', effects: ['syncLedger'] });
    const audited = await sql(
      db.url,
      `select actor, role, auth_method, target, details->>'group' as "group" from audit_log where action = 'replay'`,
    );
    expect(audited.rows).toEqual([
      {
        actor: 'token:billing-ops',
        role: 'operator',
        auth_method: 'api_token',
        target: 'stripe evt_inv_billing_dead',
        group: 'billing',
      },
    ]);
    expect((await listed(tokens['billing-ops']!, 'status=received')).map((e) => e.eventId)).toEqual([
      'evt_inv_billing_dead',
    ]);
  });
});

describe('the audit log (GET /admin/audit)', () => {
  it("each team's token reads only its group's rows; the break-glass token every row", async () => {
    await call(tokens['default-ops']!, 'POST', '/events/stripe/evt_inv_default_failed/replay', {});
    const groupsOf = async (token: string, query = '') => {
      const answer = await call(token, 'GET', `/audit${query}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return (answer.body.entries as { group: string | null; target: string | null }[]).map((e) => [
        e.group,
        e.target,
      ]);
    };
    expect(await groupsOf(tokens['billing-ops']!)).toEqual([['billing', 'stripe evt_inv_billing_dead']]);
    expect(await groupsOf(tokens['default-ops']!)).toEqual([['default', 'stripe evt_inv_default_failed']]);
    expect(await groupsOf(tokens['integrations-ops']!)).toEqual([]);
    const all = await groupsOf(ADMIN_TOKEN);
    expect(all).toEqual(
      expect.arrayContaining([
        ['billing', 'stripe evt_inv_billing_dead'],
        ['default', 'stripe evt_inv_default_failed'],
        [null, 'token billing-ops'],
      ]),
    );
    expect(await groupsOf(ADMIN_TOKEN, '?group=billing')).toEqual([
      ['billing', 'stripe evt_inv_billing_dead'],
    ]);
    const refused = await call(tokens['billing-ops']!, 'GET', '/audit?group=default');
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
      status: 403,
      code: 'forbidden',
    });
    for (const query of ['?group=Not%20A%20Group', '?limit=0', '?before=x', '?colour=red', '?actor=%00']) {
      const answer = await call(ADMIN_TOKEN, 'GET', `/audit${query}`);
      expect({ status: answer.status, code: answer.body.error?.code }, query).toEqual({
        status: 400,
        code: 'invalid_filter',
      });
    }
  });
});
