/**
 * `pnpm bench`: every benchmark against one fresh embedded PostgreSQL, each printing one table of figures next
 * to the same-run baselines they are judged against.
 *
 *   pnpm bench                       all benchmarks, 10 s per measurement
 *   pnpm bench -- --duration=3       quick run (or BENCH_DURATION_SECONDS=3)
 *   pnpm bench -- --only=receiver    one benchmark
 *   pnpm bench -- --only=sizing      bytes, WAL and CPU per event (BENCH_SIZING_EVENTS, default 10,000)
 *   pnpm bench -- --only=pooler      direct vs through PgBouncer in transaction mode (needs /usr/sbin/pgbouncer)
 *   pnpm bench -- --only=groups      the receiver with a second consumer group subscribed vs the default alone
 *   pnpm bench -- --only=verify      signature verification µs per provider vs a bare HMAC (BENCH_VERIFY_REQUESTS)
 *   pnpm bench -- --only=batch       items recorded /s in batches of 100, 1,000, 10,000 vs single events
 *   pnpm bench -- --only=destinations  deliveries /s vs a naive pg-boss + fetch forwarder; record to 2xx; isolation
 *   pnpm bench -- --soak             the receiver on 10 million events and retention under load (BENCH_SOAK_EVENTS)
 *   pnpm bench -- --only=console --events=100000   the console's pages on a smaller table (default 1,000,000)
 *   BENCH_DURABLE=0                  fsync/synchronous_commit off (default on, as in production)
 *   BENCH_POOL_SIZE, BENCH_LOG_LEVEL receiver pool size (default: the receiver's) and log level (default info)
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startBenchPostgres } from './lib/postgres.ts';
import { batchBenchmark } from './batch.ts';
import { consoleBenchmark } from './console.ts';
import { destinationsBenchmark } from './destinations.ts';
import { groupsBenchmark } from './groups.ts';
import { formatTable, type BenchTable } from './lib/table.ts';
import { poolerBenchmark } from './pooler.ts';
import { receiverBenchmark } from './receiver.ts';
import type { BenchContext } from './lib/context.ts';
import { sizingBenchmark } from './sizing.ts';
import { soakBenchmark } from './soak.ts';
import { tracingBenchmark } from './tracing.ts';
import { verifyBenchmark } from './verify.ts';
import { workerBenchmark } from './worker.ts';

/** Each benchmark is a function returning one table; add new ones here. */
const BENCHMARKS: Record<string, (ctx: BenchContext) => Promise<BenchTable>> = {
  receiver: receiverBenchmark,
  worker: workerBenchmark,
  console: consoleBenchmark,
  tracing: tracingBenchmark,
  sizing: sizingBenchmark,
  pooler: poolerBenchmark,
  groups: groupsBenchmark,
  verify: verifyBenchmark,
  batch: batchBenchmark,
  destinations: destinationsBenchmark,
};
/** Run only when asked for (`--soak`): it writes millions of rows and takes many minutes. */
const SOAK = { soak: soakBenchmark };

const { values } = parseArgs({
  // `pnpm bench -- --duration=3` passes the `--` through; it is not the end of our options.
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    duration: { type: 'string' },
    only: { type: 'string' },
    events: { type: 'string' },
    soak: { type: 'boolean' },
  },
  allowPositionals: true,
});
const durationSeconds = Number(values.duration ?? process.env.BENCH_DURATION_SECONDS ?? 10);
if (!Number.isFinite(durationSeconds) || durationSeconds <= 0)
  throw new Error('--duration must be > 0 seconds');
const events = values.events === undefined ? undefined : Number(values.events);
if (events !== undefined && !(Number.isInteger(events) && events >= 1_000))
  throw new Error('--events must be a whole number of at least 1000');
const known: Record<string, (ctx: BenchContext) => Promise<BenchTable>> = { ...BENCHMARKS, ...SOAK };
const selected = values.soak ? ['soak'] : values.only ? values.only.split(',') : Object.keys(BENCHMARKS);
for (const name of selected) {
  if (!known[name]) throw new Error(`unknown benchmark "${name}"; known: ${Object.keys(known).join(', ')}`);
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
// Everything here shares the machine's CPUs: another busy process skews every figure, so say how busy it was.
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
process.stdout.write(`# pnpm bench: ${os.cpus().length} CPUs, load average ${load()} at start\n\n`);
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  log(
    'node runs without --expose-gc: the load generator cannot collect before each run, and its GC lands in them',
  );
}
const durable = process.env.BENCH_DURABLE !== '0';
log(`starting embedded PostgreSQL (${durable ? 'durable' : 'fsync off'})`);
const postgres = await startBenchPostgres({ durable });
// Ctrl-C: stop PostgreSQL (and delete its directory) rather than leave it running.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    void postgres.stop().finally(() => process.exit(130));
  });
}
let failed = false;
try {
  for (const name of selected) {
    try {
      const table = await known[name]!({ postgres, durationMs: durationSeconds * 1000, log, events });
      process.stdout.write(`${formatTable(table)}\n`);
    } catch (error) {
      failed = true;
      log(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
} finally {
  await postgres.stop();
}
process.stdout.write(`load average ${load()} at the end (1, 5, 15 min)\n`);
process.exitCode = failed ? 1 : 0;
