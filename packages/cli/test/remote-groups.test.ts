import { queuesOf } from '@webhook-inbox/inbox/queue';
import { insertThreeTeams, TEAM_ERRORS, TEAM_FAILURES, useTestDatabase } from '@webhook-inbox/testing';
import type { Receiver } from '@webhook-inbox/receiver';
import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runRemoteCli } from '@webhook-inbox/scenarios/cli';
import { runCli, useCliReceiver, type Run } from './cli-process.ts';

// Three teams (default, billing, integrations) on one receiver, each with an operator token limited to its
// consumer group: the CLI run as a process against the admin API (`--url`, `--token`) lists, shows and counts
// exactly its team's failures with their errors, nothing of another team's, and no DATABASE_URL in sight.

// A process start is about a second, up to ten under a full parallel run.
vi.setConfig({ testTimeout: 180_000 });

const ADMIN_TOKEN = 'cli-remote-groups-admin-token-0123456789';
const database = useTestDatabase();
let receiver: Receiver;
let pool: pg.Pool;
const tokens: Record<string, string> = {};

const ERRORS = TEAM_ERRORS;

function inbox(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return runCli(args, {
    DATABASE_URL: database.url,
    WEBHOOK_INBOX_TOKEN: undefined,
    WEBHOOK_INBOX_URL: undefined,
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
    ...env,
  });
}

/** The CLI as `team`'s operator runs it: its token and the admin API's URL, no database. */
const asTeam = (team: string, args: string[]) =>
  runRemoteCli(args, { url: receiver.managementUrl, token: tokens[team]! });

const cli = useCliReceiver(database, { ADMIN_TOKEN, STRIPE_WEBHOOK_SECRET: 'whsec_cli_remote_groups' });
beforeAll(async () => {
  receiver = cli.receiver();
  pool = cli.pool();
  await insertThreeTeams(pool);
  for (const team of ['default', 'billing', 'integrations']) {
    const created = await inbox([
      'tokens',
      'create',
      `${team}-ops`,
      '--role',
      'operator',
      '--group',
      team,
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    tokens[team] = (JSON.parse(created.stdout) as { token: string }).token;
  }
});

interface Listed {
  eventId: string;
  status: string;
  lastError: string | null;
  groups: string[];
}

describe('events --group --status failed, remotely, per team', () => {
  for (const [team, status, eventId] of TEAM_FAILURES) {
    it(`${team} lists exactly its ${status} event with its error, nothing of another team's`, async () => {
      const run = await asTeam(team, ['events', '--group', team, '--status', status, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const { events } = JSON.parse(run.stdout) as { events: Listed[] };
      expect(events.map((e) => [e.eventId, e.status, e.lastError])).toEqual([
        [eventId, status, ERRORS[team]],
      ]);
      const table = await asTeam(team, ['events', '--group', team]);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain(ERRORS[team]);
      for (const [other, error] of Object.entries(ERRORS)) {
        if (other !== team) expect(table.stdout).not.toContain(error);
      }
    });
  }

  it("billing's failed list holds nothing: its one failure is dead, and another team's failures are not its own", async () => {
    const run = await asTeam('billing', ['events', '--group', 'billing', '--status', 'failed', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { events: Listed[] }).events).toEqual([]);
  });

  it("shows and counts the team's part; another team's group exits 1 with the API's code", async () => {
    const shown = await asTeam('billing', [
      'show',
      'stripe',
      'evt_inv_billing_dead',
      '--group',
      'billing',
      '--json',
    ]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      group: 'billing',
      status: 'dead',
      lastError: ERRORS.billing,
    });
    expect(shown.stdout).not.toContain('sendReceipt');

    const stats = await asTeam('integrations', ['stats', '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({
      group: 'integrations',
      events: { failed: 1, dead: 0 },
      groups: [{ group: 'integrations', status: 'failed', count: 1 }],
    });

    const refused = await asTeam('billing', ['events', '--group', 'integrations']);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining('forbidden') as unknown,
    });
    const bad = await asTeam('billing', ['events', '--group', 'Not-A-Group!']);
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('invalid_filter') as unknown,
    });
  });
});

describe('replay --group, remotely, per team', () => {
  const billingDead = (...more: string[]) =>
    asTeam('billing', ['replay', '--group', 'billing', '--status', 'dead', ...more]);
  const SECOND_DEAD = 'evt_inv_billing_dead_timeout';
  const billingRows = async () =>
    (
      await pool.query<{ eventId: string; status: string }>(
        `select event_id as "eventId", status from webhook_event_groups where consumer_group = 'billing'
          order by event_id`,
      )
    ).rows;
  const jobsOf = async (queue: string) =>
    (
      await pool.query<{ eventId: string }>(
        `select data->>'eventId' as "eventId" from pgboss.job where name = $1 order by 1`,
        [queue],
      )
    ).rows.map((row) => row.eventId);
  const untouched = async () => {
    const { rows } = await pool.query<{ key: string; status: string }>(`
      select event_id || '/default' as key, status from webhook_events where event_id = 'evt_inv_default_failed'
      union all
      select event_id || '/' || consumer_group, status from webhook_event_groups
       where consumer_group = 'integrations'`);
    expect(rows.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
      { key: 'evt_cus_integrations_failed/integrations', status: 'failed' },
      { key: 'evt_inv_default_failed/default', status: 'failed' },
    ]);
  };

  beforeAll(async () => {
    // A second billing failure of another cause: a failure group's replay takes one, a status replay both.
    await pool.query(`
      update effect_runs set fingerprint = 'ledger locked'
       where event_id = 'evt_inv_billing_dead' and effect = 'syncLedger';
      insert into webhook_events (provider, event_id, type, status, attempts)
        values ('stripe', '${SECOND_DEAD}', 'invoice.paid', 'processed', 1);
      insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
        values ('stripe', '${SECOND_DEAD}', 'billing', 'dead', 6, 'syncLedger: ledger timeout');
      insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error,
                               fingerprint)
        values ('stripe', '${SECOND_DEAD}', 'syncLedger', 'failed', 6, 'k7', now(), 'ledger timeout',
                'ledger timeout');
    `);
  });

  it("a dry run counts the team's matching events and changes nothing", async () => {
    const run = await billingDead('--dry-run', '--json');
    expect(run.code, run.stderr).toBe(0);
    const results = JSON.parse(run.stdout) as { eventId: string; group: string; effects: string[] }[];
    expect(results.map((r) => [r.eventId, r.group, r.effects])).toEqual([
      ['evt_inv_billing_dead', 'billing', ['syncLedger']],
      [SECOND_DEAD, 'billing', ['syncLedger']],
    ]);
    expect(run.stderr).toContain('filter: --group billing --status dead');
    expect(run.stderr).toContain('would replay 2 of 2 matching events');
    // The default team's dead events are its own: billing's are processed there.
    const own = await asTeam('default', ['replay', '--group', 'default', '--status', 'dead', '--dry-run']);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain('would replay 0 of 0 matching events');

    expect(await billingRows()).toMatchObject([
      { eventId: 'evt_inv_billing_dead', status: 'dead' },
      { eventId: SECOND_DEAD, status: 'dead' },
      { eventId: 'evt_inv_default_failed', status: 'processed' },
    ]);
    expect(await jobsOf(queuesOf('billing').events)).toEqual([]);
    const { rows } = await pool.query(`select 1 from audit_log where action in ('replay', 'bulk_replay')`);
    expect(rows).toEqual([]);
  });

  it('a token limited to another group is refused 403 forbidden, and nothing is replayed', async () => {
    for (const dryRun of [[], ['--dry-run']]) {
      const run = await asTeam('integrations', [
        'replay',
        '--group',
        'billing',
        '--status',
        'dead',
        ...dryRun,
      ]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: 1,
        stderr: expect.stringContaining('refused (403) forbidden') as unknown,
      });
    }
    expect(await jobsOf(queuesOf('billing').events)).toEqual([]);
  });

  it("replays exactly the failure group's events, then the rest by status, audited as the token", async () => {
    const failureGroup = await asTeam('billing', [
      'replay',
      '--group',
      'billing',
      '--effect',
      'syncLedger',
      '--fingerprint',
      'ledger locked',
    ]);
    expect(failureGroup.code, failureGroup.stderr).toBe(0);
    expect(failureGroup.stdout).toContain('replayed 1 of 1 matching events (1 queued');
    expect(await jobsOf(queuesOf('billing').events)).toEqual(['evt_inv_billing_dead']);
    expect(await billingRows()).toMatchObject([
      { eventId: 'evt_inv_billing_dead', status: 'received' },
      { eventId: SECOND_DEAD, status: 'dead' },
      { eventId: 'evt_inv_default_failed', status: 'processed' },
    ]);

    const rest = await billingDead();
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain('replayed 1 of 1 matching events');
    expect(await jobsOf(queuesOf('billing').events)).toEqual(['evt_inv_billing_dead', SECOND_DEAD]);
    await untouched();

    const { rows } = await pool.query(
      `select action, actor, auth_method as method, target, coalesce(details->>'group', details->'filter'->>'group') as "group",
              details->'filter'->>'fingerprint' as fingerprint
         from audit_log where action in ('replay', 'bulk_replay') order by id`,
    );
    const by = { actor: 'token:billing-ops', method: 'api_token', group: 'billing' };
    expect(rows).toEqual([
      { ...by, action: 'replay', target: 'stripe evt_inv_billing_dead', fingerprint: null },
      { ...by, action: 'bulk_replay', target: null, fingerprint: 'ledger locked' },
      { ...by, action: 'replay', target: `stripe ${SECOND_DEAD}`, fingerprint: null },
      { ...by, action: 'bulk_replay', target: null, fingerprint: null },
    ]);
  });

  it('a bad parameter exits 2 with the API code, never a 500', async () => {
    const run = await billingDead('--limit', '5000');
    expect({ code: run.code, stderr: run.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('invalid_request: body: limit: must be from 1 to 1000') as unknown,
    });
  });
});
