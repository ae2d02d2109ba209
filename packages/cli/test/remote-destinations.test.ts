/**
 * `webhook-inbox destinations` against a remote receiver's admin API (`--url`, a token), as a team's operator runs
 * it without DATABASE_URL: the list holds only its consumer groups' destinations, pause and resume change only
 * those, audited with the token as actor; another team's is not there (exit 3), and a viewer may not pause (exit 1).
 */
import { destinationEffect } from '@webhook-inbox/inbox/destinations';
import { destinationStates, effectRoutes } from '@webhook-inbox/inbox/sql';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runRemoteCli } from '@webhook-inbox/scenarios/cli';
import { runCli, useCliReceiver } from './cli-process.ts';

// A process start is about a second, up to ten under a full parallel run.
vi.setConfig({ testTimeout: 180_000 });

const ADMIN_TOKEN = 'cli-remote-destinations-admin-token-01234';
const database = useTestDatabase();
const cli = useCliReceiver(database, { ADMIN_TOKEN, STRIPE_WEBHOOK_SECRET: 'whsec_cli_remote_destinations' });
let pool: pg.Pool;
const tokens: Record<string, string> = {};

/** The CLI as the holder of `token` runs it: the admin API's URL, no database. */
const as = (token: string, args: string[]) =>
  runRemoteCli(args, { url: cli.receiver().managementUrl, token: tokens[token]! });

async function state(name: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ state: string }>(
    'select state from destination_states where name = $1',
    [name],
  );
  return rows[0]?.state;
}

beforeAll(async () => {
  pool = cli.pool();
  // What the billing and integrations teams' workers record at their start: their destinations and routes.
  await pool.query(
    destinationStates.registerDestinations([
      { name: 'billing-api', url: 'https://billing.example.com/hooks' },
      { name: 'integrations-api', url: 'https://integrations.example.com/hooks' },
    ]),
  );
  for (const [group, name] of [
    ['billing', 'billing-api'],
    ['integrations', 'integrations-api'],
  ] as const) {
    const route = { provider: 'stripe', eventType: 'invoice.paid', kind: 'external' as const, position: 0 };
    await pool.query(effectRoutes.insertEffectRoutes([{ ...route, effect: destinationEffect(name) }], group));
  }
  for (const [name, role, group] of [
    ['billing-ops', 'operator', 'billing'],
    ['billing-viewer', 'viewer', 'billing'],
  ] as const) {
    const created = await runCli(['tokens', 'create', name, '--role', role, '--group', group, '--json'], {
      DATABASE_URL: database.url,
      WEBHOOK_INBOX_TOKEN: undefined,
      WEBHOOK_INBOX_URL: undefined,
    });
    expect(created.code, created.stderr).toBe(0);
    tokens[name] = (JSON.parse(created.stdout) as { token: string }).token;
  }
});

describe('destinations --url --token', () => {
  it("lists only the token's groups' destinations", async () => {
    const run = await as('billing-ops', ['destinations', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<{ name: string; group: string; state: string }>;
    expect(rows.map((r) => [r.name, r.group, r.state])).toEqual([['billing-api', 'billing', 'active']]);
    const table = await as('billing-ops', ['destinations']);
    expect(table.stdout).toMatch(/billing-api\s+billing\s+active/);
    expect(table.stdout).not.toContain('integrations-api');
  });

  it('pauses and resumes its own, audited with the token as actor', async () => {
    const paused = await as('billing-ops', ['destinations', 'pause', 'billing-api']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe('billing-api: paused\n');
    expect(await state('billing-api')).toBe('paused');
    // The admin API answers the state it left.
    const answer = await fetch(`${cli.receiver().managementUrl}/admin/destinations/billing-api/resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens['billing-ops']}` },
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ name: 'billing-api', state: 'active', reason: null });
    expect(await state('billing-api')).toBe('active');
    const { rows } = await pool.query<{ action: string; actor: string }>(
      `select action, actor from audit_log where target = 'billing-api' order by id`,
    );
    expect(rows).toEqual([
      { action: 'destination_paused', actor: 'token:billing-ops' },
      { action: 'destination_resumed', actor: 'token:billing-ops' },
    ]);
    const resumed = await as('billing-ops', ['destinations', 'resume', 'billing-api']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('billing-api: resumed\n');
  });

  it("finds neither another team's destination nor an unknown one (exit 3), and a viewer may not pause (exit 1)", async () => {
    const other = await as('billing-ops', ['destinations', 'pause', 'integrations-api']);
    expect(other.code).toBe(3);
    expect(other.stderr).toContain('no destination integrations-api');
    expect(await state('integrations-api')).toBe('active');
    const unknown = await as('billing-ops', ['destinations', 'pause', 'nowhere']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('no destination nowhere');
    const viewer = await as('billing-viewer', ['destinations', 'pause', 'billing-api']);
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('forbidden');
    expect(await state('billing-api')).toBe('active');
  });
});
