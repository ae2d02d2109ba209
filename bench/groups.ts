import { createPool } from '../packages/db/src/index.ts';
import { createSenderBoss } from '../packages/inbox/src/boss.ts';
import { recordEffectRoutes } from '../packages/inbox/src/effect-routes.ts';
import { ensureQueues } from '../packages/inbox/src/queue.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import type { BenchContext } from './lib/context.ts';
import { rateOf, receiverTurns } from './lib/receiver-load.ts';
import { SERVER, spawnReceiver } from './lib/receiver-process.ts';

/** Turns each setup is measured in. */
const ROUNDS = 3;
const CONNECTIONS = 64;

/**
 * What a second consumer group costs the receiver. Two databases, two receivers: in one only the default group
 * has effects for `checkout.session.completed` (one job per event, no group row: what a single team runs); in the
 * other the group `billing` has one too (its queue created and its routes recorded as its worker's start does), so
 * every new event also gets a `webhook_event_groups` row and a job on `webhook-events.billing`. New signed Stripe
 * events over 64 keep-alive connections, in alternating turns so the machine's drift falls on both. No worker
 * runs: the receiver's cost alone.
 */
export async function groupsBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const sliceMs = Math.max(1_000, ctx.durationMs / (2 * ROUNDS));
  const setups = {
    one: await ctx.postgres.database('bench_groups_one'),
    two: await ctx.postgres.database('bench_groups_two'),
  };
  for (const [setup, url] of Object.entries(setups)) {
    const pool = createPool({ connectionString: url, max: 2 });
    const boss = createSenderBoss(url, { applicationName: 'webhook-inbox-bench' });
    await boss.start();
    try {
      const route = {
        provider: 'stripe',
        eventType: 'checkout.session.completed',
        kind: 'database' as const,
      };
      await ensureQueues(boss);
      await recordEffectRoutes(pool, [{ ...route, effect: 'provisionAccount', position: 0 }]);
      if (setup === 'two') {
        await ensureQueues(boss, undefined, 'billing');
        await recordEffectRoutes(pool, [{ ...route, effect: 'recordRevenue', position: 0 }], 'billing');
      }
    } finally {
      await boss.stop({ graceful: false, close: true });
      await pool.end();
    }
  }

  const receivers = {
    one: await spawnReceiver(SERVER, setups.one, 16, logLevel),
    two: await spawnReceiver(SERVER, setups.two, 16, logLevel),
  };
  let totals;
  try {
    ctx.log(`groups: receiver warm-up, then ${ROUNDS} turns of ${fixed(sliceMs / 1000)}s, 1 and 2 groups`);
    totals = await receiverTurns(receivers, {
      rounds: ROUNDS,
      sliceMs,
      connections: CONNECTIONS,
    });
  } finally {
    await receivers.one.stop();
    await receivers.two.stop();
  }

  const rate = (setup: 'one' | 'two') => rateOf(totals[setup]);
  const worst = (setup: 'one' | 'two') => totals[setup].latency.worstMs;
  return {
    title:
      'Receiver: a second consumer group subscribed to every event vs the default group alone (same run)',
    columns: ['measurement', '1 group', '2 groups', '2 / 1'],
    rows: [
      {
        measurement: `new signed Stripe events /s (${CONNECTIONS} connections)`,
        '1 group': fixed(rate('one'), 0),
        '2 groups': fixed(rate('two'), 0),
        '2 / 1': fixed(rate('two') / rate('one'), 2),
      },
      {
        measurement: 'p99 latency, ms (worst turn)',
        '1 group': fixed(worst('one')),
        '2 groups': fixed(worst('two')),
        '2 / 1': fixed(worst('two') / worst('one'), 2),
      },
    ],
    notes: [
      `${ROUNDS} alternating turns of ${fixed(sliceMs / 1000)}s each, pool 16; no worker runs (jobs accumulate in both)`,
      '2 groups: per new event one more row (webhook_event_groups) and one more job (webhook-events.billing), in the same statement and transaction',
    ],
  };
}
