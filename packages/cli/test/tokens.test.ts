import os from 'node:os';
import { useTestDatabase } from '@webhook-inbox/testing';
import { signStripe } from '@webhook-inbox/providers';
import type { Receiver } from '@webhook-inbox/receiver';
import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, useCliReceiver, type Run } from './cli-process.ts';

// The CLI's tokens commands and its audit trail, as real processes: each change it makes on the database is in
// audit_log with the OS user at this host (local_cli); against a remote receiver (--url, WEBHOOK_INBOX_TOKEN) it
// acts, and is audited, as the token.

// A process start is about a second, up to ten under a full parallel run.
vi.setConfig({ testTimeout: 180_000 });

const STRIPE_SECRET = 'whsec_cli_tokens_secret';
const ADMIN_TOKEN = 'cli-tokens-test-admin-token-0123456789';
const LOCAL_ACTOR = `${os.userInfo().username}@${os.hostname()}`;
const database = useTestDatabase();
let receiver: Receiver;
let pool: pg.Pool;

function inbox(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(args, {
    DATABASE_URL: database.url,
    WEBHOOK_INBOX_TOKEN: undefined,
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
    ...env,
  });
}

/** Records a Stripe subscription event through the receiver, as Stripe would deliver it. */
async function deliver(id: string): Promise<void> {
  const body = JSON.stringify({
    id,
    object: 'event',
    type: 'customer.subscription.created',
    created: 1_700_000_000,
    data: { object: { id: `sub_${id}`, object: 'subscription', customer: 'cus_tokens', status: 'active' } },
  });
  const response = await fetch(new URL('/webhooks/stripe', receiver.url), {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': signStripe({ payload: body, secret: STRIPE_SECRET }),
    },
  });
  expect(response.status).toBe(200);
}

const audit = async (action: string) =>
  (
    await pool.query<{ actor: string; role: string; auth_method: string; target: string | null }>(
      `select actor, role, auth_method, target from audit_log where action = $1 order by id`,
      [action],
    )
  ).rows;

const cli = useCliReceiver(database, { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET, ADMIN_TOKEN });
beforeAll(() => {
  receiver = cli.receiver();
  pool = cli.pool();
});

describe('inbox tokens', () => {
  it('creates tokens, printed once, and lists them without the token', async () => {
    const created = await inbox([
      'tokens',
      'create',
      'ci-platform',
      '--role',
      'operator',
      '--expires-in',
      '30d',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { token, groups, role } = JSON.parse(created.stdout) as {
      token: string;
      groups: null;
      role: string;
    };
    expect({ groups, role }).toEqual({ groups: null, role: 'operator' });
    expect(token).toMatch(/^whi_/);
    const scoped = await inbox([
      'tokens',
      'create',
      'ci-billing',
      '--role',
      'operator',
      '--group',
      'billing',
    ]);
    expect(scoped.code, scoped.stderr).toBe(0);
    expect(scoped.stdout).toMatch(/groups billing, expires .*\nwhi_\S+\nThis is the only time it is shown/);

    const listed = await inbox(['tokens', 'list', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        name: 'ci-billing',
        groups: 'billing',
        status: 'active',
        createdBy: LOCAL_ACTOR,
      }),
      expect.objectContaining({ name: 'ci-platform', groups: 'all', status: 'active' }),
    ]);
    expect(listed.stdout).not.toContain(token);
  });

  it('refuses a taken name, a bad name or role, an unknown token; revokes, each change audited as the local user', async () => {
    expect((await inbox(['tokens', 'create', 'ci-platform', '--role', 'viewer'])).code).toBe(2);
    expect((await inbox(['tokens', 'create', 'Bad Name', '--role', 'viewer'])).code).toBe(2);
    expect((await inbox(['tokens', 'create', 'x', '--role', 'root'])).code).toBe(2);
    expect((await inbox(['tokens', 'revoke', 'nobody'])).code).toBe(3);

    const revoked = await inbox(['tokens', 'revoke', 'ci-billing']);
    expect(revoked.code, revoked.stderr).toBe(0);
    const local = { actor: LOCAL_ACTOR, role: 'admin', auth_method: 'local_cli' };
    expect(await audit('token_created')).toEqual([
      { ...local, target: 'token ci-platform' },
      { ...local, target: 'token ci-billing' },
    ]);
    expect(await audit('token_revoked')).toEqual([{ ...local, target: 'token ci-billing' }]);
  });
});

describe('the CLI in the audit log', () => {
  it('records a replay, a bulk replay and a purge with the OS user at this host', async () => {
    await deliver('evt_cli_audit_1');
    await deliver('evt_cli_audit_2');
    const single = await inbox(['replay', 'stripe', 'evt_cli_audit_1']);
    expect(single.code, single.stderr).toBe(0);
    const bulk = await inbox(['replay', '--status', 'received', '--type', 'customer.subscription.created']);
    expect(bulk.code, bulk.stderr).toBe(0);
    const dry = await inbox(['replay', 'stripe', 'evt_cli_audit_2', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const purged = await inbox(['purge', '--older-than', '30d']);
    expect(purged.code, purged.stderr).toBe(0);

    const local = { actor: LOCAL_ACTOR, role: 'admin', auth_method: 'local_cli' };
    // One row per event replayed, in its transaction; the dry run wrote none.
    expect(await audit('replay')).toEqual([
      { ...local, target: 'stripe evt_cli_audit_1' },
      { ...local, target: 'stripe evt_cli_audit_1' },
      { ...local, target: 'stripe evt_cli_audit_2' },
    ]);
    const summary = await pool.query<{ details: Record<string, unknown> }>(
      `select details from audit_log where action = 'bulk_replay'`,
    );
    expect(summary.rows).toEqual([
      { details: expect.objectContaining({ total: 2, replayed: 2, remaining: 0 }) as unknown },
    ]);
    expect(await audit('purge')).toEqual([{ ...local, target: 'retention' }]);
  });
});

describe('the CLI against a remote receiver', () => {
  it('lists, shows and replays through the admin API as the token, audited as the token', async () => {
    await deliver('evt_cli_remote');
    const created = await inbox(['tokens', 'create', 'remote-operator', '--role', 'operator', '--json']);
    const { token } = JSON.parse(created.stdout) as { token: string };
    // No DATABASE_URL: everything goes through the receiver.
    const remote = {
      DATABASE_URL: '',
      WEBHOOK_INBOX_TOKEN: token,
      WEBHOOK_INBOX_URL: receiver.managementUrl,
    };

    const listed = await inbox(['events', '--type', 'customer.subscription.created', '--json'], remote);
    expect(listed.code, listed.stderr).toBe(0);
    expect(
      (JSON.parse(listed.stdout) as { events: { eventId: string }[] }).events.map((e) => e.eventId),
    ).toContain('evt_cli_remote');
    const shown = await inbox(['show', 'stripe', 'evt_cli_remote', '--json'], remote);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      eventId: 'evt_cli_remote',
      payload: { id: 'evt_cli_remote' },
    });
    expect((await inbox(['show', 'stripe', 'evt_nope'], remote)).code).toBe(3);

    const replayed = await inbox(['replay', 'stripe', 'evt_cli_remote', '--json'], remote);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toEqual([expect.objectContaining({ enqueued: true })]);
    const rows = await pool.query(
      `select actor, role, auth_method, remote_address from audit_log where action = 'replay' and target = $1`,
      ['stripe evt_cli_remote'],
    );
    expect(rows.rows).toEqual([
      {
        actor: 'token:remote-operator',
        role: 'operator',
        auth_method: 'api_token',
        remote_address: '127.0.0.1',
      },
    ]);
  });

  it("refuses what the token's role may not do, what needs the database, and a revoked token", async () => {
    const created = await inbox(['tokens', 'create', 'remote-operator-2', '--role', 'operator', '--json']);
    const { token } = JSON.parse(created.stdout) as { token: string };
    const remote = {
      DATABASE_URL: '',
      WEBHOOK_INBOX_TOKEN: token,
      WEBHOOK_INBOX_URL: receiver.managementUrl,
    };
    // An operator may not force; the refusal names the permission, exit 1.
    const forced = await inbox(
      [
        'replay',
        'stripe',
        'evt_cli_remote',
        '--force-effect',
        'upsertSubscription',
        '--url',
        receiver.managementUrl,
      ],
      { ...remote, WEBHOOK_INBOX_URL: '' },
    );
    expect({ code: forced.code, stderr: forced.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining('forbidden: role operator lacks permission force') as unknown,
    });
    // The admin API replays one event without a dry run: a usage error, exit 2.
    expect((await inbox(['replay', 'stripe', 'evt_cli_remote', '--dry-run'], remote)).code).toBe(2);
    expect((await inbox(['events'], { ...remote, WEBHOOK_INBOX_URL: '' })).code).toBe(2);

    expect((await inbox(['tokens', 'revoke', 'remote-operator-2'])).code).toBe(0);
    const refused = await inbox(['events'], remote);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining('token_revoked') as unknown,
    });
  });
});
