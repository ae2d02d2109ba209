import { startSmtpSink } from '@webhook-inbox/testing/smtp';
import { createPool } from '../../packages/db/src/index.ts';
import { DEFAULT_QUEUE_SETTINGS } from '../../packages/inbox/src/queue.ts';
import { cpuMs } from './process.ts';
import { inTurns } from './turns.ts';
import { count, sendAll, spawnReady, stop, timeUntil, WORKER, workerStartFlags } from '../worker.ts';
import { checkoutEvent, startProducer } from '@webhook-inbox/scenarios/worker';

export interface DrainTotals {
  events: number;
  seconds: number;
  /** The workers' CPU time (user + system), from start-up's end to the last event processed. */
  cpuMs: number;
}

/**
 * The worker draining backlogs of checkout events (three effects each, SMTP to a local sink) in alternating
 * turns, one per mode and round, so the machine's drift falls on every mode alike. Each turn loads `events` new
 * events, starts a worker with the mode's environment over the base one (`DATABASE_URL`, `SMTP_URL`,
 * `LOG_LEVEL`, `WORKER_PORT`), times it until they are processed, and stops it.
 */
export async function drainTurns<M extends string>(options: {
  databaseUrl: string;
  modes: Record<M, Record<string, string>>;
  rounds: number;
  events: number;
  logLevel: string;
}): Promise<Record<M, DrainTotals>> {
  const modes = Object.keys(options.modes) as M[];
  const totals = Object.fromEntries(
    modes.map((mode) => [mode, { events: 0, seconds: 0, cpuMs: 0 }]),
  ) as Record<M, DrainTotals>;
  const smtp = await startSmtpSink({ parse: false });
  const pool = createPool({ connectionString: options.databaseUrl, max: 18 });
  const producer = await startProducer(pool, options.databaseUrl, DEFAULT_QUEUE_SETTINGS);
  let sent = 0;
  try {
    await inTurns(modes, options.rounds, async (mode) => {
      const first = sent;
      await sendAll(options.events, (i) =>
        producer.send(
          checkoutEvent({
            customer: `cus_drain_${first + i}`,
            subscription: `sub_drain_${first + i}`,
            email: `d${first + i}@example.test`,
          }),
        ),
      );
      sent += options.events;
      const env = {
        DATABASE_URL: options.databaseUrl,
        SMTP_URL: smtp.url,
        LOG_LEVEL: options.logLevel,
        WORKER_PORT: '0',
        ...options.modes[mode],
      };
      const worker = await spawnReady(
        process.execPath,
        [...workerStartFlags(), WORKER],
        env,
        '"worker started"',
      );
      const cpuAtStart = cpuMs(worker.pid!);
      const rate = await timeUntil(sent, () =>
        count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`),
      );
      totals[mode].cpuMs += cpuMs(worker.pid!) - cpuAtStart;
      await stop(worker);
      totals[mode].events += options.events;
      totals[mode].seconds += rate.seconds;
    });
  } finally {
    await producer.stop();
    await pool.end();
    await smtp.close();
  }
  return totals;
}
