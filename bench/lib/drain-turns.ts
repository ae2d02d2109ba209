import type { ChildProcess } from 'node:child_process';
import type pg from 'pg';
import { startSmtpSink } from '@webhook-inbox/testing/smtp';
import { createPool } from '../../packages/db/src/index.ts';
import {
  configureQueues,
  DEFAULT_QUEUE_SETTINGS,
  type QueueSettings,
} from '../../packages/inbox/src/queue.ts';
import { cpuMs, memory, sampleRss } from './process.ts';
import { inTurns } from './turns.ts';
import { count, sendAll, spawnReady, stop, timeUntil, WORKER, workerStartFlags } from './worker-process.ts';
import { checkoutEvent, startProducer, type Producer } from '@webhook-inbox/scenarios/worker';

/** One side of a same-run drain comparison: how its backlog is made, its process started, its progress read. */
export interface Drainer {
  /** Records `events` new events for the next drain. */
  load: (events: number) => Promise<void>;
  /** Starts the draining process; it resolves once the process is ready. */
  start: () => Promise<ChildProcess>;
  /** How many events are done so far, this drainer's and any other's that shares its database. */
  done: () => Promise<number>;
}

export interface DrainTotals {
  events: number;
  seconds: number;
  /** The drainers' CPU time (user + system), from start-up's end to the last event done. */
  cpuMs: number;
  /** RSS (MiB) at the first drain's start, the highest sampled during the drains, and the highest peak (VmHWM). */
  idleRssMiB: number;
  maxRssMiB: number;
  peakRssMiB: number;
}

/** Events per second and CPU milliseconds per event of drains taken together. */
export const perSecond = (t: DrainTotals) => t.events / t.seconds;
export const cpuMsPerEvent = (t: DrainTotals) => t.cpuMs / t.events;

/**
 * Drains in alternating turns, one per drainer and round, so the machine's drift falls on every side alike; with
 * `abba`, every other round runs them in reverse (a, b, b, a), so none always goes first. Each turn loads `events`
 * new events, starts the drainer's process, times it until they are done, and stops it.
 */
export async function drainInTurns<M extends string>(
  drainers: Record<M, Drainer>,
  options: { rounds: number; events: number; abba?: boolean },
): Promise<Record<M, DrainTotals>> {
  const modes = Object.keys(drainers) as M[];
  const totals = Object.fromEntries(
    modes.map((mode) => [
      mode,
      { events: 0, seconds: 0, cpuMs: 0, idleRssMiB: Number.NaN, maxRssMiB: 0, peakRssMiB: 0 },
    ]),
  ) as Record<M, DrainTotals>;
  await inTurns(
    modes,
    options.rounds,
    async (mode) => {
      const drainer = drainers[mode];
      const total = totals[mode];
      const before = await drainer.done();
      await drainer.load(options.events);
      const child = await drainer.start();
      const pid = child.pid!;
      if (Number.isNaN(total.idleRssMiB)) total.idleRssMiB = memory(pid).rssMiB;
      const rss = sampleRss(pid);
      const cpuAtStart = cpuMs(pid);
      const rate = await timeUntil(options.events, async () => (await drainer.done()) - before);
      total.cpuMs += cpuMs(pid) - cpuAtStart;
      total.maxRssMiB = Math.max(total.maxRssMiB, rss.stop());
      total.peakRssMiB = Math.max(total.peakRssMiB, memory(pid).peakMiB);
      await stop(child);
      total.events += options.events;
      total.seconds += rate.seconds;
    },
    { abba: options.abba },
  );
  return totals;
}

/**
 * The inbox worker's side of a drain on `pool`'s database: checkout events (three effects each) recorded through
 * `ingest()`, drained by a worker (`node <start flags> server.ts`) started with `env`; an event is done when
 * processed. With `queue`, the queues are configured so before each backlog is recorded (a job keeps its queue's
 * settings from when it was sent).
 */
export function checkoutDrainer(
  pool: pg.Pool,
  producer: Producer,
  options: { name: string; env: Record<string, string>; queue?: QueueSettings },
): Drainer {
  let sent = 0;
  return {
    async load(events) {
      if (options.queue) await configureQueues(producer.boss, options.queue);
      const first = sent;
      await sendAll(events, (i) =>
        producer.send(
          checkoutEvent({
            customer: `cus_${options.name}_${first + i}`,
            subscription: `sub_${options.name}_${first + i}`,
            email: `${options.name}${first + i}@example.test`,
          }),
        ),
      );
      sent += events;
    },
    start: () =>
      spawnReady(process.execPath, [...workerStartFlags(), WORKER], options.env, '"worker started"'),
    done: () => count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`),
  };
}

/** A pool and a test producer on `url` for `use`, closed after it. */
export async function withProducer<T>(
  url: string,
  use: (pool: pg.Pool, producer: Producer) => Promise<T>,
): Promise<T> {
  const pool = createPool({ connectionString: url, max: 18 });
  const producer = await startProducer(pool, url, DEFAULT_QUEUE_SETTINGS);
  try {
    return await use(pool, producer);
  } finally {
    await producer.stop();
    await pool.end();
  }
}

/**
 * The worker draining checkout events (three effects each, SMTP to a local sink) in alternating turns, one
 * worker environment per mode over the base one, all on one database.
 */
export async function drainTurns<M extends string>(options: {
  databaseUrl: string;
  modes: Record<M, Record<string, string>>;
  rounds: number;
  events: number;
  logLevel: string;
}): Promise<Record<M, DrainTotals>> {
  const smtp = await startSmtpSink({ parse: false });
  try {
    const base = {
      DATABASE_URL: options.databaseUrl,
      SMTP_URL: smtp.url,
      LOG_LEVEL: options.logLevel,
      WORKER_PORT: '0',
    };
    return await withProducer(options.databaseUrl, (pool, producer) => {
      const drainers = Object.fromEntries(
        Object.entries<Record<string, string>>(options.modes).map(([mode, env]) => [
          mode,
          checkoutDrainer(pool, producer, { name: `drain_${mode}`, env: { ...base, ...env } }),
        ]),
      ) as Record<M, Drainer>;
      return drainInTurns(drainers, { rounds: options.rounds, events: options.events });
    });
  } finally {
    await smtp.close();
  }
}
