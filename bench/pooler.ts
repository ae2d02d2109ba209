import { pgbouncerAvailable, startPgBouncer } from '../packages/testing/src/pgbouncer.ts';
import { drainTurns } from './lib/drain-turns.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import type { BenchContext } from './lib/context.ts';
import { rateOf, receiverTurns, type ReceiverTotals } from './lib/receiver-load.ts';
import { SERVER, spawnReceiver } from './lib/receiver-process.ts';

/** Turns each of direct and pooled is measured in. */
const ROUNDS = 2;
const CONNECTIONS = 64;
const POOLED = { DATABASE_POOLER: 'transaction' };

/**
 * What a transaction-mode pooler costs. The receiver and the worker each run twice, straight to PostgreSQL and
 * through Debian's PgBouncer (`pool_mode = transaction`, 20 server connections per database) with
 * `DATABASE_POOLER=transaction`, in alternating turns so the machine's drift falls on both. Receiver: new signed
 * Stripe events over 64 keep-alive connections. Worker: a backlog of checkout events drained (three effects each,
 * SMTP to a local sink). PgBouncer shares the machine's two cores with everything else.
 */
export async function poolerBenchmark(ctx: BenchContext): Promise<BenchTable> {
  if (!pgbouncerAvailable())
    throw new Error('no PgBouncer at /usr/sbin/pgbouncer (apt-get install pgbouncer)');
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const sliceMs = Math.max(1_000, ctx.durationMs / (2 * ROUNDS));
  const events = Number(process.env.BENCH_POOLER_EVENTS ?? 2_000);

  // ---- receiver ----
  const receiverUrl = await ctx.postgres.database('bench_pooler_receiver');
  const receiverBouncer = await startPgBouncer({ serverUrl: receiverUrl });
  let requests: Record<'direct' | 'pooled', ReceiverTotals>;
  try {
    const receivers = {
      direct: await spawnReceiver(SERVER, receiverUrl, 16, logLevel),
      pooled: await spawnReceiver(SERVER, receiverBouncer.url(receiverUrl), 16, logLevel, POOLED),
    };
    try {
      ctx.log(
        `pooler: receiver warm-up, then ${ROUNDS} turns of ${fixed(sliceMs / 1000)}s, direct and pooled`,
      );
      requests = await receiverTurns(receivers, {
        rounds: ROUNDS,
        sliceMs,
        connections: CONNECTIONS,
      });
    } finally {
      await receivers.direct.stop();
      await receivers.pooled.stop();
    }
  } finally {
    await receiverBouncer.stop();
  }

  // ---- worker ----
  ctx.log(`pooler: worker, ${ROUNDS} drains of ${events} checkout events each, direct and pooled`);
  const workerUrl = await ctx.postgres.database('bench_pooler_worker');
  const workerBouncer = await startPgBouncer({ serverUrl: workerUrl });
  let drains;
  try {
    drains = await drainTurns({
      databaseUrl: workerUrl,
      modes: { direct: {}, pooled: { ...POOLED, DATABASE_URL: workerBouncer.url(workerUrl) } },
      rounds: ROUNDS,
      events,
      logLevel,
    });
  } finally {
    await workerBouncer.stop();
  }

  const perSecond = (n: number, seconds: number) => n / seconds;
  const row = (measurement: string, direct: number, pooled: number) => ({
    measurement,
    'direct /s': fixed(direct, 0),
    'PgBouncer /s': fixed(pooled, 0),
    'PgBouncer / direct': fixed(pooled / direct, 2),
  });
  return {
    title: 'Behind PgBouncer in transaction mode (DATABASE_POOLER=transaction) vs direct (same run)',
    columns: ['measurement', 'direct /s', 'PgBouncer /s', 'PgBouncer / direct'],
    rows: [
      row(
        `receiver: new signed Stripe events (${CONNECTIONS} connections)`,
        rateOf(requests.direct),
        rateOf(requests.pooled),
      ),
      row(
        'worker: drain checkout events (3 effects, SMTP)',
        perSecond(drains.direct.events, drains.direct.seconds),
        perSecond(drains.pooled.events, drains.pooled.seconds),
      ),
    ],
    notes: [
      `${ROUNDS} alternating turns each; receiver turns of ${fixed(sliceMs / 1000)}s (pool 16), worker drains of ${events} events (BENCH_POOLER_EVENTS)`,
      'PgBouncer 1.18 (Debian), pool_mode = transaction, default_pool_size = 20, on the same two cores; no target: information for sizing',
    ],
  };
}
