/**
 * Behind a transaction-mode pooler (Debian's PgBouncer 1.18, `pool_mode = transaction`, no protocol-level
 * prepared statements): receivers, the worker, the admin API and the CLI with `DATABASE_POOLER=transaction`.
 * Without the setting, named statements land on server sessions that never prepared them, and about half the
 * deliveries were answered 503. With it, every delivery is answered as on a direct connection, duplicates racing
 * over two receivers resolve to one row and one job, and every effect happens once.
 */
import { spawn } from 'node:child_process';
import { useTestDatabase } from '@webhook-inbox/testing';
import { requirePgBouncer } from '@webhook-inbox/testing/pgbouncer';
import { expect, it } from 'vitest';
import { chaosReceiverEnv } from './chaos/support/cluster.ts';
import { mixedEvents } from './chaos/support/events.ts';
import { snapshot } from './chaos/support/invariants.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, withScenario } from './chaos/support/scenario.ts';
import { post } from '@webhook-inbox/scenarios/receiver';

const db = useTestDatabase();
const EVENTS = 40;
const ADMIN_TOKEN = 'pooler-test-admin-token';

it.runIf(requirePgBouncer())(
  'through PgBouncer in transaction mode: every delivery answered, duplicates once, effects once, replays work',
  async () => {
    await withScenario({ databaseUrl: db.url, pooler: 'transaction' }, async (scenario) => {
      const { pool, smtp } = scenario;
      await scenario.startWorker();
      const receivers = await Promise.all([
        scenario.startReceiver(chaosReceiverEnv(db.url, { ADMIN_TOKEN })),
        scenario.startReceiver(chaosReceiverEnv(db.url)),
      ]);

      // Each event twice at once, one copy to each receiver: 80 deliveries in flight together.
      const events = mixedEvents(EVENTS, { run: 'pooler', customers: 8 });
      const answers = await Promise.all(
        events.flatMap((event) => receivers.map((receiver) => post(receiver.url, event.delivery))),
      );
      expect(answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.body}`)).toEqual([]);
      const outcomes = answers.map((a) => (JSON.parse(a.body) as { status: string }).status);
      expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(EVENTS);
      expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(EVENTS);

      await scenario.waitForProcessed(EVENTS, { timeout: 90_000, message: 'every event processed' });
      const after = await snapshot(pool);
      expect(after.rows).toBe(EVENTS);
      expect(after.jobs).toBe(EVENTS);
      expectEachEventProcessedOnce(after, events, smtp);

      // The admin API's replay (the receiver's pool) and the CLI's (its own): queued again, nothing re-runs.
      const emails = smtp.messages.length;
      const [first, second] = events.filter((event) => event.delivery.provider === 'stripe');
      const admin = await fetch(
        `${receivers[0].managementUrl}/admin/events/stripe/${first!.delivery.key}/replay`,
        { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
      );
      expect(admin.status, await admin.clone().text()).toBe(202);
      const cli = await runCli(['replay', 'stripe', second!.delivery.key], {
        DATABASE_URL: scenario.processDatabaseUrl,
        DATABASE_POOLER: 'transaction',
      });
      expect(cli.code, cli.output).toBe(0);
      await scenario.waitForProcessed(EVENTS, { timeout: 60_000, message: 'the replays processed' });
      const replayed = await snapshot(pool);
      expect(replayed.effects).toEqual(after.effects);
      expect(smtp.messages).toHaveLength(emails);
      expectNoCrashLines(scenario.processes);
    });
  },
);

async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['packages/cli/src/main.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
