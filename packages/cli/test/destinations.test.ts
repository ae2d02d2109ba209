/**
 * `webhook-inbox destinations` as a process: the list of the destinations a worker registered, and pause and
 * resume on the database, each audited as the CLI's user at this host.
 */
import os from 'node:os';
import { destinationStates } from '@webhook-inbox/inbox/sql';
import { useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-process.ts';

const db = useTestDatabase();
let pool: pg.Pool;
const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // What a worker with a destinations file records at its start.
  await pool.query(
    destinationStates.registerDestinations([
      { name: 'crm', url: 'https://crm.example.com/hooks' },
      { name: 'ledger', url: 'https://ledger.example.com/hooks' },
    ]),
  );
});
afterAll(async () => pool.end());

async function state(name: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ state: string }>(
    'select state from destination_states where name = $1',
    [name],
  );
  return rows[0]?.state;
}

describe('webhook-inbox destinations', () => {
  it('lists the destinations and their state', async () => {
    const run = await cli('destinations', '--json');
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<{ name: string; state: string; pending: number }>;
    expect(rows.map((r) => [r.name, r.state, r.pending])).toEqual([
      ['crm', 'active', 0],
      ['ledger', 'active', 0],
    ]);
    const table = await cli('destinations');
    expect(table.stdout).toMatch(/crm\s+default\s+active/);
  });

  it('pauses and resumes a destination, audited as the user at this host', async () => {
    const paused = await cli('destinations', 'pause', 'crm');
    expect(paused.code, paused.stderr).toBe(0);
    expect(await state('crm')).toBe('paused');
    expect((await cli('destinations')).stdout).toMatch(/crm\s+default\s+paused/);
    const resumed = await cli('destinations', 'resume', 'crm');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await state('crm')).toBe('active');
    const { rows } = await pool.query<{ action: string; actor: string }>(
      `select action, actor from audit_log where target = 'crm' order by id`,
    );
    const actor = `${os.userInfo().username}@${os.hostname()}`;
    expect(rows).toEqual([
      { action: 'destination_paused', actor },
      { action: 'destination_resumed', actor },
    ]);
  });

  it('exits 3 for a destination no worker started', async () => {
    const run = await cli('destinations', 'pause', 'nowhere');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('no destination "nowhere"');
  });
});
