import { randomBytes } from 'node:crypto';
import { startOtlpCollector } from '../packages/testing/src/otlp-collector.ts';
import { drainTurns } from './lib/drain-turns.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import { eventBody, load, SERVER, signedRequest, spawnReceiver, type BenchContext } from './receiver.ts';

/** Turns each of tracing on and off is measured in. */
const ROUNDS = 2;
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
  const sliceMs = Math.max(1_000, ctx.durationMs / (2 * ROUNDS));
  const events = Number(process.env.BENCH_TRACING_EVENTS ?? 1_000);
  try {
    // ---- receiver ----
    const receiverUrl = await ctx.postgres.database('bench_tracing_receiver');
    const receivers = {
      off: await spawnReceiver(SERVER, receiverUrl, 16, logLevel, OFF),
      on: await spawnReceiver(SERVER, receiverUrl, 16, logLevel, on),
    };
    const runId = randomBytes(4).toString('hex');
    let n = 0;
    const next = () => signedRequest(eventBody(`evt_${runId}_${n++}`));
    const requests = { off: { completed: 0, seconds: 0 }, on: { completed: 0, seconds: 0 } };
    try {
      ctx.log(
        `tracing: receiver warm-up, then ${ROUNDS} turns of ${fixed(sliceMs / 1000)}s, tracing off and on`,
      );
      for (const receiver of Object.values(receivers))
        await load(receiver.url, { durationMs: 1_000, next }, 'accepted');
      for (let round = 0; round < ROUNDS; round++) {
        for (const mode of ['off', 'on'] as const) {
          // Signed before the clock starts: the provider's work, not the receiver's.
          const prepared = Array.from({ length: 20_000 }, next);
          let i = 0;
          const result = await load(
            receivers[mode].url,
            { durationMs: sliceMs, next: () => prepared[i++] ?? next() },
            'accepted',
          );
          requests[mode].completed += result.completed;
          requests[mode].seconds += sliceMs / 1000;
        }
      }
    } finally {
      await receivers.off.stop();
      await receivers.on.stop();
    }

    // ---- worker ----
    ctx.log(`tracing: worker, ${ROUNDS} drains of ${events} checkout events each, tracing off and on`);
    const drains = await drainTurns({
      databaseUrl: await ctx.postgres.database('bench_tracing_worker'),
      modes: { off: OFF, on },
      rounds: ROUNDS,
      events,
      logLevel,
    });

    const perSecond = (a: { n: number; seconds: number }) => a.n / a.seconds;
    const receiverOff = perSecond({ n: requests.off.completed, seconds: requests.off.seconds });
    const receiverOn = perSecond({ n: requests.on.completed, seconds: requests.on.seconds });
    const workerOff = perSecond({ n: drains.off.events, seconds: drains.off.seconds });
    const workerOn = perSecond({ n: drains.on.events, seconds: drains.on.seconds });
    const row = (measurement: string, off: number, on: number) => ({
      measurement,
      'off /s': fixed(off, 0),
      'on /s': fixed(on, 0),
      'on / off': fixed(on / off, 2),
      target: '>= 0.9',
      result: on / off >= 0.9 ? 'ok' : 'MISSED',
    });
    return {
      title: 'Tracing on (OTLP to a local collector stand-in) vs off (same run)',
      columns: ['measurement', 'off /s', 'on /s', 'on / off', 'target', 'result'],
      rows: [
        row('receiver: new signed Stripe events (16 connections)', receiverOff, receiverOn),
        row('worker: drain checkout events (3 effects, SMTP)', workerOff, workerOn),
      ],
      notes: [
        `${ROUNDS} alternating turns each; receiver turns of ${fixed(sliceMs / 1000)}s, worker drains of ${events} events (BENCH_TRACING_EVENTS)`,
        `tracing on: every span sampled and exported (batch span processor, http/protobuf); ${collector.exports()} export requests received by the stand-in`,
      ],
    };
  } finally {
    await collector.close();
  }
}
