import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, useCliReceiver, type Run } from './cli-process.ts';

// A failure group's replay from a shell, as real processes: `replay --effect E --fingerprint F` replays exactly the
// group's events (the default group's too, with no --status), its dry run shows the filter that selected them, and
// the bulk replay is audited with it.

// A process start is about a second, up to ten under a full parallel run.
vi.setConfig({ testTimeout: 180_000 });

const database = useTestDatabase();
let pool: pg.Pool;

function inbox(args: string[]): Promise<Run> {
  return runCli(args, {
    DATABASE_URL: database.url,
    WEBHOOK_INBOX_TOKEN: undefined,
    WEBHOOK_INBOX_URL: undefined,
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
  });
}

const cli = useCliReceiver(database, { STRIPE_WEBHOOK_SECRET: 'whsec_cli_failure_group' });
beforeAll(async () => {
  pool = cli.pool();
  await pool.query(`
    insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
      ('stripe', 'invoice.paid', 'sendReceipt', 'external', 0, 'default'),
      ('stripe', 'invoice.paid', 'syncLedger', 'database', 0, 'billing');
    insert into webhook_events (provider, event_id, type, status, attempts, last_error)
    select 'stripe', id, 'invoice.paid', 'failed', 3, 'sendReceipt: failed'
      from unnest(array['evt_smtp_1', 'evt_smtp_2', 'evt_other']) as id;
    insert into webhook_events (provider, event_id, type, status) values ('stripe', 'evt_billing', 'invoice.paid', 'processed');
    insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
      values ('stripe', 'evt_billing', 'billing', 'dead', 6, 'syncLedger: smtp down for customer');
    insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error) values
      ('stripe', 'evt_smtp_1', 'sendReceipt', 'failed', 3, 'k1', now(), 'smtp down for customer cus_IaTagvBaGokTj'),
      ('stripe', 'evt_smtp_2', 'sendReceipt', 'failed', 3, 'k2', now(), 'smtp down for customer cus_Q1w2E3r4T5y6U7'),
      ('stripe', 'evt_other', 'sendReceipt', 'failed', 3, 'k3', now(), 'template receipt.html missing'),
      ('stripe', 'evt_billing', 'syncLedger', 'failed', 6, 'k4', now(), 'smtp down for customer cus_ZzZzZzZzZzZzZz');
  `);
});

describe('replay --effect --fingerprint', () => {
  it("replays exactly one failure group's events, its dry run showing the filter", async () => {
    const failures = await inbox(['failures', '--group', 'default', '--effect', 'sendReceipt', '--json']);
    expect(failures.code, failures.stderr).toBe(0);
    const groups = JSON.parse(failures.stdout) as { fingerprint: string; events: number }[];
    expect(groups.map((g) => [g.fingerprint, g.events])).toEqual([
      ['smtp down for customer <id>', 2],
      ['template receipt.html missing', 1],
    ]);
    const filter = ['--effect', 'sendReceipt', '--fingerprint', 'smtp down for customer <id>'];

    const dry = await inbox(['replay', ...filter, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      "filter: --group default --effect sendReceipt --fingerprint 'smtp down for customer <id>'",
    );
    expect(dry.stdout).toContain('would replay 2 of 2 matching events');
    expect(dry.stdout).toMatch(/evt_smtp_1/);
    expect(dry.stdout).toMatch(/evt_smtp_2/);
    expect(dry.stdout).not.toMatch(/evt_other|evt_billing/);

    const run = await inbox(['replay', ...filter, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(
      (JSON.parse(run.stdout) as { eventId: string; enqueued: boolean }[]).map((r) => [
        r.eventId,
        r.enqueued,
      ]),
    ).toEqual([
      ['evt_smtp_1', true],
      ['evt_smtp_2', true],
    ]);
    const audited = await pool.query<{ target: string | null; details: { filter: unknown } }>(
      `select target, details from audit_log where action in ('replay', 'bulk_replay') order by id`,
    );
    expect(audited.rows.map((r) => r.target)).toEqual(['stripe evt_smtp_1', 'stripe evt_smtp_2', null]);
    expect(audited.rows[2]?.details.filter).toMatchObject({
      group: 'default',
      effect: 'sendReceipt',
      fingerprint: 'smtp down for customer <id>',
    });
  });

  it('refuses one without the other, and with an event named (exit 2)', async () => {
    expect((await inbox(['replay', '--effect', 'sendReceipt'])).code).toBe(2);
    expect((await inbox(['replay', '--fingerprint', 'x'])).code).toBe(2);
    expect(
      (await inbox(['replay', 'stripe', 'evt_other', '--effect', 'sendReceipt', '--fingerprint', 'x'])).code,
    ).toBe(2);
  });
});
