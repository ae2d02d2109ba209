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
