import { useTestDatabase } from '@webhook-inbox/testing';
import type { Receiver } from '@webhook-inbox/receiver';
import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
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

const ERRORS = {
  default: 'sendReceipt: smtp down',
  billing: 'syncLedger: ledger locked',
  integrations: 'pushToSlack: slack answered 500',
};

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
  inbox([...args, '--url', receiver.managementUrl, '--token', tokens[team]!], { DATABASE_URL: '' });

const cli = useCliReceiver(database, { ADMIN_TOKEN, STRIPE_WEBHOOK_SECRET: 'whsec_cli_remote_groups' });
beforeAll(async () => {
  receiver = cli.receiver();
  pool = cli.pool();
  await pool.query(`
    insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
      ('stripe', 'invoice.paid', 'sendReceipt', 'external', 0, 'default'),
      ('stripe', 'invoice.paid', 'syncLedger', 'database', 0, 'billing'),
      ('stripe', 'customer.created', 'welcome', 'external', 0, 'default'),
      ('stripe', 'customer.created', 'pushToSlack', 'external', 0, 'integrations');
    insert into webhook_events (provider, event_id, type, status, attempts, last_error) values
      ('stripe', 'evt_inv_billing_dead', 'invoice.paid', 'processed', 1, null),
      ('stripe', 'evt_inv_default_failed', 'invoice.paid', 'failed', 2, '${ERRORS.default}'),
      ('stripe', 'evt_cus_integrations_failed', 'customer.created', 'processed', 1, null);
    insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error) values
      ('stripe', 'evt_inv_billing_dead', 'billing', 'dead', 6, '${ERRORS.billing}'),
      ('stripe', 'evt_inv_default_failed', 'billing', 'processed', 1, null),
      ('stripe', 'evt_cus_integrations_failed', 'integrations', 'failed', 2, '${ERRORS.integrations}');
    insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error) values
      ('stripe', 'evt_inv_billing_dead', 'sendReceipt', 'completed', 1, 'k1', now(), null),
      ('stripe', 'evt_inv_billing_dead', 'syncLedger', 'failed', 6, 'k2', now(), 'ledger locked'),
      ('stripe', 'evt_inv_default_failed', 'sendReceipt', 'failed', 2, 'k3', now(), 'smtp down'),
      ('stripe', 'evt_cus_integrations_failed', 'pushToSlack', 'failed', 2, 'k6', now(), 'slack answered 500');
  `);
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
  for (const [team, status, eventId] of [
    ['default', 'failed', 'evt_inv_default_failed'],
    ['billing', 'dead', 'evt_inv_billing_dead'],
    ['integrations', 'failed', 'evt_cus_integrations_failed'],
  ] as const) {
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
