import { randomBytes } from 'node:crypto';
import { startOtlpCollector } from '../packages/testing/src/otlp-collector.ts';
import { drainTurns } from './lib/drain-turns.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import type { BenchContext } from './lib/context.ts';
import { receiverTurns, type ReceiverTotals } from './lib/receiver-load.ts';
import { SERVER, spawnReceiver } from './lib/receiver-process.ts';
import { newEventRequests } from './lib/stripe-requests.ts';

/** Turns each of tracing on and off is measured in: the receiver's (short, many: the machine drifts), the worker's. */
const RECEIVER_ROUNDS = 4;
const WORKER_ROUNDS = 2;
const OFF = { OTEL_SDK_DISABLED: 'true' };

/**
 * What tracing costs. The receiver and the worker each run twice, tracing off (`OTEL_SDK_DISABLED=true`) and
 * on (`OTEL_EXPORTER_OTLP_ENDPOINT` to an OTLP collector stand-in on loopback that accepts and drops every
 * export, over the SDK's default http/protobuf, every span sampled), measured in alternating turns so the
 * machine's drift falls on both. Receiver: new signed Stripe events over 16 keep-alive connections. Worker:
 * a backlog of checkout events drained (three effects each, SMTP to a local sink).
 */
export async function tracingBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const collector = await startOtlpCollector({ keep: false });
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const sliceMs = Math.max(2_000, ctx.durationMs / (2 * RECEIVER_ROUNDS));
  const events = Number(process.env.BENCH_TRACING_EVENTS ?? 2_000);
  try {
    // ---- receiver ----
    const receiverUrl = await ctx.postgres.database('bench_tracing_receiver');
    const receivers = {
      off: await spawnReceiver(SERVER, receiverUrl, 16, logLevel, OFF),
      on: await spawnReceiver(SERVER, receiverUrl, 16, logLevel, on),
    };
    let requests: Record<'off' | 'on', ReceiverTotals>;
    try {
      ctx.log(
        `tracing: receiver warm-up, then ${RECEIVER_ROUNDS} turns of ${fixed(sliceMs / 1000)}s, tracing off and on`,
      );
      requests = await receiverTurns(receivers, {
        rounds: RECEIVER_ROUNDS,
        sliceMs,
        next: newEventRequests(randomBytes(4).toString('hex')),
        signAhead: 20_000,
      });
    } finally {
      await receivers.off.stop();
      await receivers.on.stop();
    }

    // ---- worker ----
    ctx.log(`tracing: worker, ${WORKER_ROUNDS} drains of ${events} checkout events each, tracing off and on`);
    const drains = await drainTurns({
      databaseUrl: await ctx.postgres.database('bench_tracing_worker'),
      modes: { off: OFF, on },
      rounds: WORKER_ROUNDS,
      events,
      logLevel,
    });

    const drained = (mode: 'off' | 'on') => ({ n: drains[mode].events, ...drains[mode] });
    const served = (mode: 'off' | 'on') => ({ n: requests[mode].completed, ...requests[mode] });
    const totals = [
      {
        measurement: 'receiver: new signed Stripe events (16 connections)',
        off: served('off'),
        on: served('on'),
      },
      {
        measurement: 'worker: drain checkout events (3 effects, SMTP)',
        off: drained('off'),
        on: drained('on'),
      },
    ];
    const rows = totals.map(({ measurement, off, on }) => {
      const ratio = on.n / on.seconds / (off.n / off.seconds);
      return {
        measurement,
        'off /s': fixed(off.n / off.seconds, 0),
        'on /s': fixed(on.n / on.seconds, 0),
        'CPU µs off / on': `${fixed((1000 * off.cpuMs) / off.n, 0)} / ${fixed((1000 * on.cpuMs) / on.n, 0)}`,
        'on / off': fixed(ratio, 2),
        target: '>= 0.9',
        result: ratio >= 0.9 ? 'ok' : 'MISSED',
      };
    });
    return {
      title: 'Tracing on (OTLP to a local collector stand-in) vs off (same run)',
      columns: ['measurement', 'off /s', 'on /s', 'CPU µs off / on', 'on / off', 'target', 'result'],
      rows,
      notes: [
        `alternating turns: the receiver ${RECEIVER_ROUNDS} of ${fixed(sliceMs / 1000)}s each, the worker ${WORKER_ROUNDS} drains of ${events} events each (BENCH_TRACING_EVENTS)`,
        "CPU µs: the receiver's or the worker's own CPU time (user + system) per request or event",
        `tracing on: every span sampled and exported (batch span processor, http/protobuf); ${collector.exports()} export requests received by the stand-in`,
      ],
    };
  } finally {
    await collector.close();
  }
}
