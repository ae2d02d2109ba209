/**
 * The benchmark's baseline: pg-boss alone, no-op jobs, sent and fetched exactly as the inbox's queue and worker
 * are configured (no NOTIFY, a 0.5 s poll, batches of 50, burst while batches come back full). `startRawSender` sends; run this file as a process to work.
 *
 *   node raw-boss.ts <database url>    prints "ready" once working; SIGTERM stops it
 */
import { fileURLToPath } from 'node:url';
import { startTestBoss } from '@webhook-inbox/testing';
import type { PgBoss } from 'pg-boss';

export const RAW_QUEUE = 'bench-raw-noop';

export interface RawSender {
  send(i: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * pg-boss as the baselines run it, started, with `queue` created: no supervision, cron or migration (the database
 * is migrated), no LISTEN/NOTIFY. Errors go to `onError` (default: ignored).
 */
export async function startBaselineBoss(
  url: string,
  queue: string,
  max: number,
  onError: (error: Error) => void = () => {},
): Promise<PgBoss> {
  const boss = await startTestBoss(url, { max, onError, useListenNotify: false });
  await boss.createQueue(queue, { notify: false });
  return boss;
}

/** A baseline worker process's pg-boss errors, on stderr. */
export const printError = (error: Error): void => {
  process.stderr.write(`${error.message}\n`);
};

export async function startRawSender(url: string, connections: number): Promise<RawSender> {
  const boss = await startBaselineBoss(url, RAW_QUEUE, connections);
  return {
    send: async (i) => {
      await boss.send(RAW_QUEUE, { i });
    },
    stop: () => boss.stop({ graceful: false, close: true }),
  };
}

async function work(url: string): Promise<void> {
  const boss = await startBaselineBoss(url, RAW_QUEUE, 5, printError);
  await boss.work(
    RAW_QUEUE,
    {
      batchSize: 50,
      localConcurrency: 2,
      burstWhenBatchFull: true,
      pollingIntervalSeconds: 0.5,
    },
    async () => {},
  );
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void boss.stop({ graceful: true, timeout: 5_000 }).then(() => process.exit(0));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = process.argv[2];
  if (!url) throw new Error('usage: node raw-boss.ts <database url>');
  await work(url);
}
