/**
 * Two teams, one inbox: one receiver, and two consumer projects' workers as processes of their own
 * (test/consumer-groups/team-worker.ts): provisioning in the default group, billing in the group `billing`, each
 * with its own effect on `checkout.session.completed` and its own table. One signed Stripe event runs both
 * teams' effects once; while billing's worker is down, provisioning goes on and billing's events wait as
 * `received`, then run once when it is back; duplicate deliveries racing still make one row and one job per group.
 * The same through PgBouncer in transaction mode (receiver and both workers with DATABASE_POOLER=transaction).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createPool } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { requirePgBouncer, startPgBouncer } from '@webhook-inbox/testing/pgbouncer';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../packages/receiver/src/index.ts';
import { post, receiverEnv, stripeDelivery } from '@webhook-inbox/scenarios/receiver';

const TEAM_WORKER = fileURLToPath(new URL('./consumer-groups/team-worker.ts', import.meta.url));

const db = useTestDatabase();
let pool: pg.Pool;
let receiver: Receiver;
const running = new Set<ChildProcess>();

interface TeamWorker {
  stop(): Promise<void>;
}

/** A team's worker process; resolves once it takes jobs. */
async function startTeam(
  team: 'provisioning' | 'billing',
  env: Record<string, string> = { DATABASE_URL: db.url },
): Promise<TeamWorker> {
  const child = spawn(process.execPath, [TEAM_WORKER, team], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(signal ?? code ?? -1);
    }),
  );
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`${team} worker exited: ${output}`);
      return output.includes('started');
    },
    { timeout: 30_000, message: `${team} worker started` },
  );
  return {
    stop: async () => {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  };
}

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 4 });
  // Each team's own table, as its own migrations would create it.
  await pool.query('create table team_provisioning_runs (event_id text not null)');
  await pool.query('create table team_billing_runs (event_id text not null)');
  receiver = await startReceiver(parseConfig(receiverEnv(db.url, { PORT: '0' })), {
    logger: pino({ level: 'silent' }),
  });
});
afterAll(async () => {
  for (const child of running) child.kill('SIGKILL');
  await receiver?.close();
  await pool?.end();
});

async function runs(team: 'provisioning' | 'billing', eventId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from team_${team}_runs where event_id = $1`,
    [eventId],
  );
  return rows[0]!.n;
}

async function statuses(eventId: string): Promise<{ default?: string; billing?: string }> {
  const { rows } = await pool.query<{ status: string; billing: string | null }>(
    `select e.status, g.status as billing
       from webhook_events e
       left join webhook_event_groups g
         on g.provider = e.provider and g.event_id = e.event_id and g.consumer_group = 'billing'
      where e.provider = 'stripe' and e.event_id = $1`,
    [eventId],
  );
  const row = rows[0];
  return row ? { default: row.status, ...(row.billing ? { billing: row.billing } : {}) } : {};
}

async function jobs(eventId: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ name: string; n: number }>(
    `select name, count(*)::int as n from pgboss.job where data->>'eventId' = $1 group by name`,
    [eventId],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.n]));
}

const bothDone = (eventId: string) =>
  waitFor(
    async () => {
      const s = await statuses(eventId);
      return s.default === 'processed' && s.billing === 'processed';
    },
    { timeout: 30_000, message: `${eventId} processed in both groups` },
  );

it('two teams on one inbox: each team runs its effects once, a team that is down delays only its own', async () => {
  const provisioning = await startTeam('provisioning');
  let billing = await startTeam('billing');

  // One signed event both teams subscribe to: both effects, once each.
  const first = stripeDelivery();
  const answer = await post(receiver.url, first);
  expect(answer.status).toBe(200);
  await bothDone(first.key);
  expect([await runs('provisioning', first.key), await runs('billing', first.key)]).toEqual([1, 1]);
  const ledger = await pool.query<{ effect: string; status: string }>(
    `select effect, status from effect_runs where event_id = $1 order by effect`,
    [first.key],
  );
  expect(ledger.rows).toEqual([
    { effect: 'provisionAccount', status: 'completed' },
    { effect: 'recordRevenue', status: 'completed' },
  ]);

  // Duplicates racing: one row, one group row, one job per group's queue.
  const racing = stripeDelivery();
  const answers = await Promise.all(Array.from({ length: 8 }, () => post(receiver.url, racing)));
  const outcomes = answers.map((a) => (JSON.parse(a.body) as { status: string }).status).sort();
  expect(outcomes).toEqual(['accepted', ...Array<string>(7).fill('duplicate')]);
  await bothDone(racing.key);
  expect(await jobs(racing.key)).toEqual({ 'webhook-events': 1, 'webhook-events.billing': 1 });
  const groupRows = await pool.query<{ n: number }>(
    `select count(*)::int as n from webhook_event_groups where event_id = $1`,
    [racing.key],
  );
  expect(groupRows.rows[0]!.n).toBe(1);
  expect([await runs('provisioning', racing.key), await runs('billing', racing.key)]).toEqual([1, 1]);

  // Billing's worker is down while events arrive: provisioning runs; billing's rows wait as `received`.
  await billing.stop();
  const whileDown = [stripeDelivery(), stripeDelivery(), stripeDelivery()];
  for (const delivery of whileDown) expect((await post(receiver.url, delivery)).status).toBe(200);
  for (const { key } of whileDown) {
    await waitFor(async () => (await statuses(key)).default === 'processed', {
      timeout: 30_000,
      message: `${key} processed by provisioning`,
    });
  }
  for (const { key } of whileDown) {
    expect(await statuses(key)).toEqual({ default: 'processed', billing: 'received' });
    expect([await runs('provisioning', key), await runs('billing', key)]).toEqual([1, 0]);
  }

  // Billing is back: its effects run, once.
  billing = await startTeam('billing');
  for (const { key } of whileDown) await bothDone(key);
  for (const { key } of whileDown) {
    expect([await runs('provisioning', key), await runs('billing', key)]).toEqual([1, 1]);
  }

  await billing.stop();
  await provisioning.stop();
});

it.runIf(requirePgBouncer())(
  'behind PgBouncer in transaction mode: the receiver and both teams through it, each effect once',
  async () => {
    const bouncer = await startPgBouncer({ serverUrl: db.url });
    const pooled = { DATABASE_URL: bouncer.url(db.url), DATABASE_POOLER: 'transaction' };
    const pooledReceiver = await startReceiver(
      parseConfig(receiverEnv(pooled.DATABASE_URL, { PORT: '0', ...pooled })),
      {
        logger: pino({ level: 'silent' }),
      },
    );
    try {
      const provisioning = await startTeam('provisioning', pooled);
      const billing = await startTeam('billing', pooled);
      const deliveries = Array.from({ length: 6 }, () => stripeDelivery());
      // Each twice at once: one row, one job per group.
      const answers = await Promise.all(
        deliveries.flatMap((delivery) => [
          post(pooledReceiver.url, delivery),
          post(pooledReceiver.url, delivery),
        ]),
      );
      expect(answers.map((a) => a.status)).toEqual(Array<number>(12).fill(200));
      for (const { key } of deliveries) await bothDone(key);
      for (const { key } of deliveries) {
        expect([await runs('provisioning', key), await runs('billing', key)]).toEqual([1, 1]);
        expect(await jobs(key)).toEqual({ 'webhook-events': 1, 'webhook-events.billing': 1 });
      }
      await billing.stop();
      await provisioning.stop();
    } finally {
      await pooledReceiver.close();
      await bouncer.stop();
    }
  },
);
