/**
 * The benchmark's baseline: pg-boss alone, no-op jobs, sent and fetched exactly as the inbox's queue and worker
 * are configured (no NOTIFY, a 0.5 s poll, batches of 50, burst while batches come back full). `startRawSender` sends; run this file as a process to work.
 *
 *   node raw-boss.ts <database url>    prints "ready" once working; SIGTERM stops it
 */
import { fileURLToPath } from 'node:url';
import { PgBoss } from 'pg-boss';

export const RAW_QUEUE = 'bench-raw-noop';

export interface RawSender {
  send(i: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRawSender(url: string, connections: number): Promise<RawSender> {
  const boss = new PgBoss({
    connectionString: url,
    max: connections,
    supervise: false,
    schedule: false,
    migrate: false,
  });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue(RAW_QUEUE, { notify: false });
  return {
    send: async (i) => {
      await boss.send(RAW_QUEUE, { i });
    },
    stop: () => boss.stop({ graceful: false, close: true }),
  };
}

async function work(url: string): Promise<void> {
  const boss = new PgBoss({
    connectionString: url,
    max: 5,
    useListenNotify: false,
    schedule: false,
    migrate: false,
    supervise: false,
  });
  boss.on('error', (error) => process.stderr.write(`${error.message}\n`));
  await boss.start();
  await boss.createQueue(RAW_QUEUE, { notify: false });
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
