import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createSender } from '../packages/receiver/src/boss.ts';
import { parseConfig } from '../packages/receiver/src/config/env.ts';
import { createLogger } from '../packages/receiver/src/logger.ts';
import { createRequestPool } from '../packages/receiver/src/receiver.ts';
import { ingest } from '../packages/inbox/src/ingest.ts';
import type { VerifiedEvent } from '@webhook-inbox/providers';
import { ensureQueues } from '../packages/inbox/src/queue.ts';
import type { BenchContext } from './lib/context.ts';
import { closedLoop, type LoadResult } from './lib/load.ts';
import { machineCpuMs, memory, sampleRss } from './lib/process.ts';
import { DEFAULT_CONNECTIONS, load } from './lib/receiver-load.ts';
import { SERVER, spawnReceiver, startFlags, type SpawnedReceiver } from './lib/receiver-process.ts';
import { eventBody, signedAhead, signedRequest } from './lib/stripe-requests.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import {
  BATCH_COLUMN,
  batchStats,
  CPU_COLUMN,
  formatBatchHistogram,
  formatCpu,
  Tally,
  type CpuPerRequest,
} from './lib/tally.ts';
import { inTurns, Turns } from './lib/turns.ts';

const BARE_SERVER = fileURLToPath(new URL('./lib/bare-receiver.ts', import.meta.url));
const CONCURRENCY = DEFAULT_CONNECTIONS;
/** A slice of the half-rate measurement. */
const HALF_SLICE_MS = 1_000;
/** The burst width group commit is for: many senders at once. */
const WIDE = 64;
/** Turns each of (a), (b) and (r) is measured in. */
const ROUNDS = 3;

const verified = (id: string): VerifiedEvent => ({
  provider: 'stripe',
  eventId: id,
  type: 'checkout.session.completed',
  payloadText: eventBody(id),
  headers: {},
});

/**
 * The receiver against its ceiling. (a) The database alone: `ingest()` called directly, through the same pool
 * the receiver builds, 16 and 64 at a time, for a new event (insert + job, one commit each) and for a duplicate
 * (the insert hitting the conflict): one transaction per event, what the receiver would do without group commit.
 * (b) The receiver as its own process over HTTP (16 and 64 keep-alive connections): signed Stripe deliveries,
 * every one a distinct new event, then duplicates; its group commit shares transactions between them. (r) For reference, the same verify +
 * `ingest()` behind a bare `node:http` server (bench/lib/bare-receiver.ts): what Node's HTTP stack alone costs
 * here. Then new events at half the measured maximum rate, for the latency at a sustainable load, and two
 * receiver processes.
 *
 * (a), (b) and (r) are measured in turns, ROUNDS slices each, and every figure sums its slices: on a shared
 * virtual machine the speed of everything drifts by tens of percent within a minute, and a ratio of two figures
 * taken a minute apart measures the drift as much as the receiver.
 *
 * Every request is signed and serialised before its slice starts: signing is the provider's work, not the
 * receiver's, and on two shared cores whatever the load generator spends per request is taken from the system
 * under test.
 */
export async function receiverBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const databaseUrl = await ctx.postgres.database('bench_receiver');
  const runId = randomBytes(4).toString('hex');
  const seconds = ctx.durationMs / 1000;
  const sliceMs = Math.max(1_000, ctx.durationMs / ROUNDS);
  const turn = `${(sliceMs / 1000).toFixed(1)}s`;
  const poolSize = Number(process.env.BENCH_POOL_SIZE ?? parseConfig({ DATABASE_URL: databaseUrl }).poolSize);
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';

  const config = parseConfig({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: String(poolSize) });
  const logger = createLogger('silent');
  const pool = createRequestPool(config, logger);
  const boss = createSender(databaseUrl, logger);
  await boss.start();
  await ensureQueues(boss);
  const deps = { pool, boss };
  const known = Array.from({ length: 1000 }, (_, i) => verified(`evt_${runId}_known_${i}`));
  for (const event of known) await ingest(deps, event);
  const receiver = await spawnReceiver(SERVER, databaseUrl, poolSize, logLevel);
  let bare: SpawnedReceiver | undefined;
  try {
    const bareServer = await spawnReceiver(BARE_SERVER, databaseUrl, poolSize, logLevel);
    bare = bareServer;
    const pid = receiver.child.pid!;
    const idleRss = memory(pid).rssMiB;
    const postmaster = ctx.postgres.postmasterPid();

    let n = 0;
    // Distinct new events, signed ahead of each slice; enough for the DB ceiling's rate with room to spare (a
    // slice that outpaces them signs the rest as it goes, which only slows the generator).
    const newEvents = (label: string, rate: number, ms: number) =>
      signedAhead(
        () => signedRequest(eventBody(`evt_${runId}_${label}_${n++}`)),
        Math.ceil((rate * ms * 1.5) / 1000) + 1_000,
      );
    // Redeliveries of the events recorded above, pre-signed, cycling through them like the ceiling does.
    const redeliveries = known.map((event) => signedRequest(event.payloadText));
    let d = 0;
    const nextRedelivery = () => redeliveries[d++ % redeliveries.length]!;

    ctx.log(`receiver: warm-up (ceiling, receiver, bare node:http), 2s each`);
    const warmMs = Math.min(2_000, ctx.durationMs);
    await closedLoop(CONCURRENCY, warmMs, (w, i) => ingest(deps, verified(`evt_${runId}_warm_${w}_${i}`)));
    for (const server of [receiver, bare]) {
      await load(server.url, { durationMs: warmMs, next: newEvents('warm', 1_500, warmMs) }, 'accepted');
      await load(server.url, { durationMs: warmMs / 2, next: nextRedelivery }, 'duplicate');
    }

    ctx.log(
      `receiver: DB ceiling (ingest() x${CONCURRENCY} and x${WIDE}, pool ${poolSize}), receiver over HTTP ` +
        `(${CONCURRENCY} and ${WIDE} keep-alive connections) and bare node:http (${CONCURRENCY}), in ${ROUNDS} ` +
        `turns of ${turn}, ${seconds}s each`,
    );
    const width = () => ({
      ceilingNew: new Tally(),
      ceilingDuplicate: new Tally(),
      httpNew: new Tally(),
      httpDuplicate: new Tally(),
      bareNew: new Tally(),
      bareDuplicate: new Tally(),
    });
    const tallies = { [CONCURRENCY]: width(), [WIDE]: width() } as Record<number, ReturnType<typeof width>>;
    const batches = () => batchStats(receiver.managementUrl);
    const rss = sampleRss(pid);
    await inTurns([CONCURRENCY, WIDE], ROUNDS, async (connections, round) => {
      const tally = tallies[connections]!;
      // The bare reference runs at the narrow width only: it is there to price Node's HTTP stack.
      const servers = connections === CONCURRENCY ? [receiver, bareServer] : [receiver];
      const into = (server: SpawnedReceiver, kind: 'New' | 'Duplicate') =>
        server === receiver ? tally[`http${kind}`] : tally[`bare${kind}`];
      await tally.ceilingNew.measure(postmaster, undefined, async () =>
        expectAll(
          await closedLoop(connections, sliceMs, async (w, i) => {
            const id = `evt_${runId}_db_${connections}_${round}_${w}_${i}`;
            if ((await ingest(deps, verified(id))) !== 'accepted') throw new Error('not new');
          }),
          'DB ceiling, new',
        ),
      );
      const rate = tally.ceilingNew.rps;
      for (const server of servers) {
        const next = newEvents(`http_${connections}_${round}`, rate * 1.5, sliceMs); // signed before the clock
        await into(server, 'New').measure(
          postmaster,
          server.child.pid,
          () => load(server.url, { durationMs: sliceMs, connections, next }, 'accepted'),
          server === receiver ? batches : undefined,
        );
      }
      await tally.ceilingDuplicate.measure(postmaster, undefined, async () =>
        expectAll(
          await closedLoop(connections, sliceMs, async (w, i) => {
            if ((await ingest(deps, known[(w * 61 + i) % known.length]!)) !== 'duplicate')
              throw new Error('not dup');
          }),
          'DB ceiling, duplicate',
        ),
      );
      for (const server of servers) {
        await into(server, 'Duplicate').measure(
          postmaster,
          server.child.pid,
          () => load(server.url, { durationMs: sliceMs, connections, next: nextRedelivery }, 'duplicate'),
          server === receiver ? batches : undefined,
        );
      }
    });
    await boss.stop({ graceful: false, close: true });
    await pool.end();

    const tally = tallies[CONCURRENCY]!;
    const wide = tallies[WIDE]!;
    const halfRate = Math.max(1, Math.floor(tally.httpNew.rps / 2));
    // Half the maximum rate, in slices alternating with the bare reference at the same rate. A slice's p99 is its
    // dozen slowest requests: one stall of the machine (the load generator, the server and PostgreSQL queue for
    // the same two cores) decides it, so the figure is the median slice's, with the pooled p99 and the worst.
    const half = { receiver: new Turns(), bare: new Turns() };
    const halfFromWrite = { receiver: new Turns(), bare: new Turns() };
    const halfSlices = Math.max(4, Math.round(seconds));
    ctx.log(`receiver: half its max rate (${halfRate}/s), ${halfSlices} slices of 1s, alternating with (r)`);
    const checkpointsBefore = await checkpoints(databaseUrl);
    let machineBusy = 0;
    const halfServers = { receiver, bare: bareServer };
    await inTurns(['receiver', 'bare'] as const, halfSlices, async (mode, slice) => {
      const server = halfServers[mode];
      const next = newEvents(`half_${mode}_${slice}`, halfRate, HALF_SLICE_MS);
      const cpuBefore = machineCpuMs();
      const result = await load(
        server.url,
        { durationMs: HALF_SLICE_MS, ratePerSecond: halfRate, next },
        'accepted',
      );
      const cpuAfter = machineCpuMs();
      if (mode === 'receiver')
        machineBusy += (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total);
      half[mode].add(result.histogram);
      halfFromWrite[mode].add(result.fromWrite);
    });
    const checkpointsDuringHalf = (await checkpoints(databaseUrl)) - checkpointsBefore;
    await bare.stop();
    bare = undefined;
    const maxRss = rss.stop();
    const { peakMiB } = memory(pid);

    // (c) scale-out: a second receiver process on the same database, the same 16 clients split between the two.
    ctx.log(`receiver: two processes (${CONCURRENCY / 2} connections each), ${seconds}s`);
    const second = await spawnReceiver(SERVER, databaseUrl, poolSize, logLevel);
    let httpTwo: { rps: number; p50Ms: number; p99Ms: number };
    try {
      const halves = await Promise.all(
        [receiver.url, second.url].map((url) =>
          load(
            url,
            {
              durationMs: ctx.durationMs,
              connections: CONCURRENCY / 2,
              next: newEvents('two', tally.ceilingNew.rps / 2, ctx.durationMs),
            },
            'accepted',
          ),
        ),
      );
      httpTwo = {
        rps: halves.reduce((sum, h) => sum + h.rps, 0),
        p50Ms: Math.max(...halves.map((h) => h.p50Ms)),
        p99Ms: Math.max(...halves.map((h) => h.p99Ms)),
      };
    } finally {
      await second.stop();
    }

    const row = (
      name: string,
      r: { rps: number; p50Ms: number; p99Ms: number; cpu?: CpuPerRequest; meanBatch?: number },
      extra = {},
    ) => ({
      measurement: name,
      'req/s': fixed(r.rps, 0),
      'p50 ms': fixed(r.p50Ms, 2),
      'p99 ms': fixed(r.p99Ms, 2),
      [CPU_COLUMN]: r.cpu ? formatCpu(r.cpu) : '',
      [BATCH_COLUMN]: r.meanBatch === undefined ? '' : fixed(r.meanBatch, 1),
      ...extra,
    });
    const ratio = (a: number, b: number) => `${fixed(a / b, 2)}x`;
    const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
    const { ceilingNew, ceilingDuplicate, httpNew, httpDuplicate, bareNew, bareDuplicate } = tally;
    return {
      title: 'Receiver: HTTP vs the database ceiling (same run)',
      columns: [
        'measurement',
        'req/s',
        'p50 ms',
        'p99 ms',
        CPU_COLUMN,
        BATCH_COLUMN,
        'vs ceiling',
        'target',
        'result',
      ],
      rows: [
        row(`(a) DB ceiling x${WIDE}: new event (ingest(), insert + job, 1 commit each)`, wide.ceilingNew),
        row(`(a) DB ceiling x${WIDE}: duplicate (insert hits the conflict)`, wide.ceilingDuplicate),
        row(`(b) receiver HTTP x${WIDE}: new event (signed, distinct)`, wide.httpNew, {
          'vs ceiling': ratio(wide.httpNew.rps, wide.ceilingNew.rps),
          target: '>= 1.2x',
          result: verdict(wide.httpNew.rps >= 1.2 * wide.ceilingNew.rps),
        }),
        row(`(b) receiver HTTP x${WIDE}: duplicate`, wide.httpDuplicate, {
          'vs ceiling': ratio(wide.httpDuplicate.rps, wide.ceilingDuplicate.rps),
          target: '>= 0.8x',
          result: verdict(wide.httpDuplicate.rps >= 0.8 * wide.ceilingDuplicate.rps),
        }),
        row(`(a) DB ceiling x${CONCURRENCY}: new event`, ceilingNew),
        row(`(a) DB ceiling x${CONCURRENCY}: duplicate`, ceilingDuplicate),
        row(`(b) receiver HTTP x${CONCURRENCY}: new event`, httpNew, {
          'vs ceiling': ratio(httpNew.rps, ceilingNew.rps),
          target: '>= 0.9x',
          result: verdict(httpNew.rps >= 0.9 * ceilingNew.rps),
        }),
        row(`(b) receiver HTTP x${CONCURRENCY}: duplicate`, httpDuplicate, {
          'vs ceiling': ratio(httpDuplicate.rps, ceilingDuplicate.rps),
          target: '>= 0.6x',
          result: verdict(httpDuplicate.rps >= 0.6 * ceilingDuplicate.rps),
        }),
        row('(r) bare node:http + same verify/ingest: new event', bareNew, {
          'vs ceiling': ratio(bareNew.rps, ceilingNew.rps),
          target: 'receiver vs it',
          result: ratio(httpNew.rps, bareNew.rps),
        }),
        row('(r) bare node:http + same verify/ingest: duplicate', bareDuplicate, {
          'vs ceiling': ratio(bareDuplicate.rps, ceilingDuplicate.rps),
          target: 'receiver vs it',
          result: ratio(httpDuplicate.rps, bareDuplicate.rps),
        }),
        {
          measurement: `(b) receiver HTTP x${CONCURRENCY}: new event at half max rate (${halfRate}/s)`,
          'p50 ms': fixed(half.receiver.p50Ms, 2),
          'p99 ms': half.receiver.toString(),
          target: 'p99 <= 15 ms',
          result: verdict(half.receiver.medianMs <= 15),
        },
        {
          measurement: `(r) bare node:http at the same rate`,
          'p50 ms': fixed(half.bare.p50Ms, 2),
          'p99 ms': half.bare.toString(),
          target: 'receiver vs it',
          result: ratio(half.receiver.medianMs, half.bare.medianMs),
        },
        row('(c) 2 receiver processes: new event (8 + 8 clients)', httpTwo, {
          'vs ceiling': ratio(httpTwo.rps, ceilingNew.rps),
          target: 'vs 1 process',
          result: ratio(httpTwo.rps, httpNew.rps),
        }),
        {
          measurement: 'receiver RSS (MiB): idle / max sampled / peak (VmHWM)',
          'req/s': '',
          'p50 ms': fixed(idleRss, 0),
          'p99 ms': `${fixed(maxRss, 0)} / ${fixed(peakMiB, 0)}`,
          target: '<= 150 MiB',
          result: verdict(peakMiB <= 150),
        },
      ],
      notes: [
        `${WIDE} and ${CONCURRENCY} concurrent clients ((r) ${CONCURRENCY} only); (a), (b) and (r) in ${ROUNDS} alternating turns of ${turn} (${seconds}s each in all); pool ${poolSize}; receiver: node ${[...startFlags(), 'server.ts'].join(' ')}, LOG_LEVEL=${logLevel} (stdout to /dev/null)`,
        `PostgreSQL (embedded) ${ctx.postgres.durable ? 'durable: fsync + synchronous_commit on' : 'fsync/synchronous_commit OFF'}`,
        'HTTP load: bench/lib/http-load.ts, keep-alive connections, requests signed before each run, the clock started once they are collected (GC) and every connection is open; latency from the scheduled start at a fixed rate (no coordinated omission)',
        'same machine: the load generator, the receiver and PostgreSQL share its CPUs; the ceiling runs without HTTP',
        '(r) is a reference, not a product: bench/lib/bare-receiver.ts, the same verify + ingest() on node:http without Hono, logging or metrics; "receiver vs it" is what those layers leave of it',
        `${CPU_COLUMN}: CPU time (user + system, /proc) per request of this process (the ceiling's driver, then the HTTP load generator), the server (receiver or bare), and PostgreSQL (postmaster and backends)`,
        `half rate: ${halfSlices} slices of ${HALF_SLICE_MS / 1000}s each for the receiver and (r), alternating; p99 as the median slice's (pooled, worst slice); "receiver vs it" is the ratio of the median slices' p99; from the request's write rather than its scheduled start (without the wait for a connection or for the load generator's event loop) the median slice's p99 was ${fixed(halfFromWrite.receiver.medianMs, 1)} ms, (r) ${fixed(halfFromWrite.bare.medianMs, 1)} ms; the machine's CPUs were ${fixed((100 * machineBusy) / halfSlices, 0)}% busy during the receiver's slices; checkpoints completed: ${checkpointsDuringHalf} (pg_stat_checkpointer)`,
        `${BATCH_COLUMN}: requests per committed group-commit transaction during that measurement (the receiver's webhook_ingest_batch_requests); over the whole run: ${formatBatchHistogram(await batchStats(receiver.managementUrl))}`,
      ],
    };
  } finally {
    await bare?.stop();
    await receiver.stop();
  }
}

function expectAll(result: LoadResult, what: string): LoadResult {
  if (result.failed > 0) {
    throw new Error(`${what}: ${result.failed} of ${result.failed + result.completed} failed`, {
      cause: result.firstError,
    });
  }
  return result;
}

/** Checkpoints the server has completed so far (timed and requested; PostgreSQL 17's pg_stat_checkpointer). */
async function checkpoints(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      'select (num_timed + num_requested)::int as n from pg_stat_checkpointer',
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}
