import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import { createPool } from '../packages/db/src/index.ts';
import { configureQueues, DEFAULT_QUEUE_SETTINGS } from '../packages/inbox/src/queue.ts';
import type { BenchContext } from './lib/context.ts';
import { enqueueNaive, NAIVE_QUEUE } from './lib/naive-worker.ts';
import { cpuMs, memory, sampleRss, startFlagsOf } from './lib/process.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import { checkoutEvent, startProducer } from '@webhook-inbox/scenarios/worker';
import { RAW_QUEUE, startRawSender } from './lib/raw-boss.ts';

export const WORKER = fileURLToPath(new URL('../apps/worker/src/server.ts', import.meta.url));
const WORKER_PACKAGE = fileURLToPath(new URL('../apps/worker/package.json', import.meta.url));
const RAW_WORKER = fileURLToPath(new URL('./lib/raw-boss.ts', import.meta.url));
export const NAIVE_WORKER = fileURLToPath(new URL('./lib/naive-worker.ts', import.meta.url));
const SENDERS = 16;
/** Issue 44's targets, each against the naive handler of the same run but the RSS bound (docs/performance.md). */
const DRAIN_TARGET = 0.9;
const CPU_TARGET = 1.15;
const RSS_TARGET_MIB = 200;

export interface Rate {
  events: number;
  seconds: number;
  perSecond: number;
}

/** A drain, and the CPU time the worker process spent on it (user + system, from /proc). */
interface Drain extends Rate {
  cpuMsPerEvent: number;
}

/**
 * The worker against pg-boss alone, same run, same database server, each worker in its own process.
 * (a) drain: a backlog of N recorded events (N jobs), then the worker starts; the clock runs from "ready" to the
 * last event processed (every effect done). (b) send + work: the worker runs while 16 senders record events
 * (`ingest()`, as the receiver does; raw: `boss.send`); the clock runs from the first send to the last event
 * done. Our events are `checkout.session.completed` with a new customer and a subscription each: three effects
 * (account upsert, welcome email over SMTP to a local sink, subscription row). Raw jobs are no-ops, for
 * information; the baseline the worker is judged against is the same three effects in a plain pg-boss handler
 * with no ledger (`lib/naive-worker.ts`), draining the same backlog: the cost of exactly-once made visible.
 */
export async function workerBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const events = Number(process.env.BENCH_WORKER_EVENTS ?? Math.max(2_000, Math.round(ctx.durationMs / 2)));
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
  const smtp = await startSmtpSink({ parse: false });
  try {
    ctx.log(`worker: pg-boss baseline, ${events} no-op jobs`);
    const rawUrl = await ctx.postgres.database('bench_worker_raw');
    const raw = await rawBaseline(rawUrl, events);

    // Turns: naive, worker, worker, naive. The order evens out what drifts during the run (the machine's other
    // load, tables that grow); each side's figure is the sum of its two drains.
    ctx.log(
      `worker: naive pg-boss handler and the worker, 2 drains of ${events} checkout events each (naive, worker, worker, naive; 3 effects each, SMTP sink)`,
    );
    const naiveUrl = await ctx.postgres.database('bench_worker_naive');
    const url = await ctx.postgres.database('bench_worker');
    const naiveFirst = await naiveBaseline(naiveUrl, events, smtp, 0);
    const ours = await inboxPipeline(url, events, smtp, logLevel);
    const naiveLast = await naiveBaseline(naiveUrl, events, smtp, events);
    const naive = {
      drain: totalDrain([naiveFirst.drain, naiveLast.drain]),
      peakRss: Math.max(naiveFirst.peakRss, naiveLast.peakRss),
    };

    ctx.log(`worker: heartbeats on and off, 4 drains of ${events} checkout events (on, off, off, on)`);
    const heartbeat = await heartbeatCost(
      await ctx.postgres.database('bench_worker_heartbeat'),
      events,
      smtp,
      logLevel,
    );
    const heartbeatRatio = heartbeat.on.perSecond / heartbeat.off.perSecond;

    const ratio = (a: Rate, b: Rate) => `${fixed(a.perSecond / b.perSecond, 2)}x`;
    const cpu = (d: Drain) => fixed(d.cpuMsPerEvent, 2);
    const row = (measurement: string, rate: Rate, extra: Record<string, string> = {}) => ({
      measurement,
      events: rate.events,
      seconds: fixed(rate.seconds, 2),
      'events/s': fixed(rate.perSecond, 0),
      ...extra,
    });
    const drainRatio = ours.drain.perSecond / naive.drain.perSecond;
    const cpuRatio = ours.drain.cpuMsPerEvent / naive.drain.cpuMsPerEvent;
    return {
      title: 'Worker: events to every effect done vs the same effects in a plain pg-boss handler (same run)',
      columns: [
        'measurement',
        'events',
        'seconds',
        'events/s',
        'CPU ms/event',
        'vs baseline',
        'target',
        'result',
      ],
      rows: [
        row('(a) baseline: naive pg-boss handler, same 3 effects, no ledger: drain', naive.drain, {
          'CPU ms/event': cpu(naive.drain),
        }),
        row('(a) worker: drain a backlog of checkout events (3 effects)', ours.drain, {
          'CPU ms/event': cpu(ours.drain),
          'vs baseline': `${fixed(drainRatio, 2)}x`,
          target: `>= ${DRAIN_TARGET}x`,
          result: drainRatio >= DRAIN_TARGET ? 'ok' : 'MISSED',
        }),
        {
          measurement: 'worker CPU per checkout event, drain (baseline: naive handler)',
          events: ours.drain.events,
          seconds: '',
          'events/s': '',
          'CPU ms/event': cpu(ours.drain),
          'vs baseline': `${fixed(cpuRatio, 2)}x (${cpu(naive.drain)} ms)`,
          target: `<= ${CPU_TARGET}x`,
          result: cpuRatio <= CPU_TARGET ? 'ok' : 'MISSED',
        },
        row(
          '(a) baseline: worker without heartbeats (expiry only, supervised every 60 s): drain',
          heartbeat.off,
          {
            'CPU ms/event': cpu(heartbeat.off),
          },
        ),
        row('(a) worker with heartbeats (10 s, supervised every 5 s): drain', heartbeat.on, {
          'CPU ms/event': cpu(heartbeat.on),
          'vs baseline': `${fixed(heartbeatRatio, 2)}x`,
          target: '>= 0.95x',
          result: heartbeatRatio >= 0.95 ? 'ok' : 'MISSED',
        }),
        row('(info) pg-boss raw: drain a backlog of no-op jobs', raw.drain, {
          'CPU ms/event': cpu(raw.drain),
        }),
        row(`(info) pg-boss raw: send (x${SENDERS}) + work, no-op`, raw.sendWork),
        row(`(info) worker: ingest (x${SENDERS}) + effects, accepted to done`, ours.sendWork, {
          'vs baseline': `${ratio(ours.sendWork, raw.sendWork)} raw`,
        }),
        {
          measurement: 'worker RSS (MiB): idle / max sampled / peak (VmHWM); baseline: naive handler peak',
          events: '',
          seconds: '',
          'events/s': `${fixed(ours.idleRss, 0)} / ${fixed(ours.maxRss, 0)} / ${fixed(ours.peakRss, 0)}`,
          'vs baseline': fixed(naive.peakRss, 0),
          target: `<= ${RSS_TARGET_MIB}`,
          result: ours.peakRss <= RSS_TARGET_MIB ? 'ok' : 'MISSED',
        },
      ],
      notes: [
        `worker: node ${[...workerStartFlags(), 'server.ts'].join(' ')}, batches of 50, 4 in flight, pool 20, LOG_LEVEL=${logLevel} (stdout to /dev/null); emails accepted by a local SMTP server: ${smtp.received()}`,
        `PostgreSQL (embedded) ${ctx.postgres.durable ? 'durable: fsync + synchronous_commit on' : 'fsync/synchronous_commit OFF'}`,
        'same machine: senders, the SMTP sink, the worker and PostgreSQL share its CPUs',
        `naive baseline: node lib/naive-worker.ts, the example's effect functions as one pg-boss handler (job data = the event), batches of 50, 4 in flight, pool 20, synchronous_commit=off; raw pg-boss peak RSS ${fixed(raw.peakRss, 0)} MiB`,
        'CPU ms/event: user + system CPU of the worker process (/proc/<pid>/stat) from ready to the last event done, divided by the events',
        `naive handler and worker: each row sums two drains of ${events} (naive, worker, worker, naive: the order evens out the machine's drift during the run); each drain a new backlog, each worker a new process`,
        `heartbeats: each row sums two drains of ${events} (on, off, off, on: the order evens out a table that grows); with them pg-boss refreshes each batch's jobs every 5 s and one worker counts the queue's jobs every 5 s`,
      ],
    };
  } finally {
    await smtp.close();
  }
}

async function rawBaseline(url: string, events: number) {
  const pool = createPool({ connectionString: url, max: 2 });
  const sender = await startRawSender(url, SENDERS + 2);
  const done = () =>
    count(pool, `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`, [
      RAW_QUEUE,
    ]);
  try {
    // (a) drain
    await sendAll(events, (i) => sender.send(i));
    let worker = await spawnReady(process.execPath, [RAW_WORKER, url], {}, 'ready');
    const drain = await drainTimed(worker, events, done);
    const peakRss = memory(worker.pid!).peakMiB;
    await stop(worker);
    // (b) send + work
    worker = await spawnReady(process.execPath, [RAW_WORKER, url], {}, 'ready');
    const sendWork = await timeWhile(
      () => sendAll(events, (i) => sender.send(events + i)),
      2 * events,
      done,
      events,
    );
    await stop(worker);
    return { drain, sendWork, peakRss };
  } finally {
    await sender.stop();
    await pool.end();
  }
}

/** One drain of the naive handler: `events` new checkout events (customers from `first` on). */
async function naiveBaseline(url: string, events: number, smtp: SmtpSink, first: number) {
  const pool = createPool({ connectionString: url, max: 2 });
  const done = () =>
    count(pool, `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`, [
      NAIVE_QUEUE,
    ]);
  try {
    const payloads = Array.from(
      { length: events },
      (_, i) =>
        checkoutEvent({
          customer: `cus_naive_${first + i}`,
          subscription: `sub_naive_${first + i}`,
          email: `n${first + i}@example.test`,
        }).payloadText,
    );
    await enqueueNaive(url, payloads);
    const worker = await spawnReady(process.execPath, [NAIVE_WORKER, url, smtp.url], {}, 'ready');
    const drain = await drainTimed(worker, events, async () => (await done()) - first);
    const peakRss = memory(worker.pid!).peakMiB;
    await stop(worker);
    const accounts = await count(pool, `select count(*)::int as n from accounts`);
    if (accounts !== first + events) {
      throw new Error(`naive baseline: ${accounts} accounts for ${first + events} events`);
    }
    return { drain, peakRss };
  } finally {
    await pool.end();
  }
}

/** `timeUntil`, plus the CPU the worker process spent meanwhile, per event. */
async function drainTimed(worker: ChildProcess, events: number, done: () => Promise<number>): Promise<Drain> {
  const cpuBefore = cpuMs(worker.pid!);
  const rate = await timeUntil(events, done);
  return { ...rate, cpuMsPerEvent: (cpuMs(worker.pid!) - cpuBefore) / events };
}

async function inboxPipeline(url: string, events: number, smtp: SmtpSink, logLevel: string) {
  const pool = createPool({ connectionString: url, max: SENDERS + 2 });
  const producer = await startProducer(pool, url, DEFAULT_QUEUE_SETTINGS);
  const done = () => count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`);
  const env = { DATABASE_URL: url, SMTP_URL: smtp.url, LOG_LEVEL: logLevel, WORKER_PORT: '0' };
  const send = (i: number) =>
    producer.send(
      checkoutEvent({
        customer: `cus_bench_${i}`,
        subscription: `sub_bench_${i}`,
        email: `b${i}@example.test`,
      }),
    );
  try {
    const drains: Drain[] = [];
    let idleRss = Number.NaN;
    let maxRss = 0;
    let peakRss = 0;
    for (const first of [0, events]) {
      await sendAll(events, (i) => send(first + i));
      const drainer = await spawnReady(
        process.execPath,
        [...workerStartFlags(), WORKER],
        env,
        '"worker started"',
      );
      if (first === 0) idleRss = memory(drainer.pid!).rssMiB;
      const rss = sampleRss(drainer.pid!);
      drains.push(await drainTimed(drainer, events, async () => (await done()) - first));
      maxRss = Math.max(maxRss, rss.stop());
      peakRss = Math.max(peakRss, memory(drainer.pid!).peakMiB);
      await stop(drainer);
    }
    const drain = totalDrain(drains);
    const worker = await spawnReady(
      process.execPath,
      [...workerStartFlags(), WORKER],
      env,
      '"worker started"',
    );
    const rss = sampleRss(worker.pid!);
    const sendWork = await timeWhile(
      () => sendAll(events, (i) => send(2 * events + i)),
      3 * events,
      done,
      events,
    );
    maxRss = Math.max(maxRss, rss.stop());
    peakRss = Math.max(peakRss, memory(worker.pid!).peakMiB);
    await stop(worker);
    const failed = await count(
      pool,
      `select count(*)::int as n from webhook_events where status <> 'processed'`,
    );
    if (failed > 0) throw new Error(`${failed} events not processed`);
    return { drain, sendWork, idleRss, maxRss, peakRss };
  } finally {
    await producer.stop();
    await pool.end();
  }
}

/**
 * The worker's drain with heartbeats (the defaults: 10 s, supervised every 5 s) and without (expiry only,
 * supervised every 60 s: pg-boss's expiry alone), two drains each, interleaved on one database. Jobs carry the
 * heartbeat of the queue when they were sent, so each backlog is sent under the setting its worker runs with.
 */
async function heartbeatCost(
  url: string,
  events: number,
  smtp: SmtpSink,
  logLevel: string,
): Promise<{ on: Drain; off: Drain }> {
  const pool = createPool({ connectionString: url, max: SENDERS + 2 });
  const producer = await startProducer(pool, url, DEFAULT_QUEUE_SETTINGS);
  const done = () => count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`);
  const settings = {
    on: {
      queue: DEFAULT_QUEUE_SETTINGS,
      env: { WORKER_HEARTBEAT_SECONDS: '10', WORKER_SUPERVISE_SECONDS: '5' },
    },
    off: {
      queue: { ...DEFAULT_QUEUE_SETTINGS, heartbeatSeconds: null },
      env: { WORKER_HEARTBEAT_SECONDS: '0', WORKER_SUPERVISE_SECONDS: '60' },
    },
  };
  const drains: Record<'on' | 'off', Drain[]> = { on: [], off: [] };
  let sent = 0;
  try {
    for (const mode of ['on', 'off', 'off', 'on'] as const) {
      await configureQueues(producer.boss, settings[mode].queue);
      const first = sent;
      await sendAll(events, (i) =>
        producer.send(
          checkoutEvent({
            customer: `cus_hb_${first + i}`,
            subscription: `sub_hb_${first + i}`,
            email: `h${first + i}@example.test`,
          }),
        ),
      );
      sent += events;
      const env = {
        DATABASE_URL: url,
        SMTP_URL: smtp.url,
        LOG_LEVEL: logLevel,
        WORKER_PORT: '0',
        ...settings[mode].env,
      };
      const worker = await spawnReady(
        process.execPath,
        [...workerStartFlags(), WORKER],
        env,
        '"worker started"',
      );
      drains[mode].push(await drainTimed(worker, events, async () => (await done()) - first));
      await stop(worker);
    }
  } finally {
    await producer.stop();
    await pool.end();
  }
  return { on: totalDrain(drains.on), off: totalDrain(drains.off) };
}

/** Drains taken together: their events over their seconds, their CPU over their events. */
function totalDrain(list: readonly Drain[]): Drain {
  const seconds = list.reduce((sum, d) => sum + d.seconds, 0);
  const n = list.reduce((sum, d) => sum + d.events, 0);
  const cpu = list.reduce((sum, d) => sum + d.cpuMsPerEvent * d.events, 0);
  return { events: n, seconds, perSecond: n / seconds, cpuMsPerEvent: cpu / n };
}

/** The Node flags of `pnpm --filter @webhook-inbox/worker start` (`node <flags> src/server.ts`). */
export const workerStartFlags = () => startFlagsOf(WORKER_PACKAGE);

/** `events` sends, `senders` (default `SENDERS`) at a time. */
export async function sendAll(
  events: number,
  send: (i: number) => Promise<unknown>,
  senders = SENDERS,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (next < events) await send(next++);
    }),
  );
}

export async function timeUntil(target: number, done: () => Promise<number>): Promise<Rate> {
  const started = performance.now();
  const seconds = await waitForCount(target, done, started);
  return { events: target, seconds, perSecond: target / seconds };
}

/** Runs `work` (the sends) and waits for `target` done; the rate counts the `events` sent in this phase. */
async function timeWhile(
  work: () => Promise<void>,
  target: number,
  done: () => Promise<number>,
  events: number,
): Promise<Rate> {
  const started = performance.now();
  await work();
  const seconds = await waitForCount(target, done, started);
  return { events, seconds, perSecond: events / seconds };
}

async function waitForCount(target: number, done: () => Promise<number>, started: number): Promise<number> {
  const deadline = started + 600_000;
  for (;;) {
    const n = await done();
    if (n >= target) break;
    if (performance.now() > deadline) throw new Error(`only ${n} of ${target} done after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return (performance.now() - started) / 1000;
}

export async function count(pool: pg.Pool, sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(sql, values);
  return rows[0]?.n ?? 0;
}

/** A child process whose stdout goes to /dev/null once `ready` has been printed. */
export async function spawnReady(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: string,
): Promise<ChildProcess> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) {
        resolve();
        // Keep draining, keep nothing.
        child.stdout?.off('data', onData);
        child.stdout?.resume();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`${args[0]} exited (${code}) before it was ready:\n${output}`)),
    );
  });
  return child;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
