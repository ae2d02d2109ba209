/**
 * Where a destination delivery's time goes: the same destination and naive forwarder as `pnpm bench --
 * --only=destinations` (concurrency 16, the raw body of a Stripe checkout, a local sink answering 204), one side per
 * run draining one backlog, with this process's CPU and PostgreSQL's (all its processes, from /proc) per delivery
 * and `pg_stat_statements` (planning and execution per statement) over the drain. For reading, not for a ratio:
 * runs of the same code move with the machine's other tenants.
 *
 *   node bench/destinations-profile.ts [--deliveries=3000] [--naive]
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createPool } from '../packages/db/src/index.ts';
import { createSenderBoss } from '../packages/inbox/src/boss.ts';
import {
  createDestinations,
  destinationQueue,
  parseDestinations,
} from '../packages/inbox/src/destinations/index.ts';
import { eventIdempotencyKey } from '../packages/inbox/src/effects/keys.ts';
import { startWebhookSink } from '../packages/testing/src/webhook-sink.ts';
import { destinationYaml, recordEvents, SECRET } from './destinations.ts';
import { startBenchPostgres } from './lib/postgres.ts';
import { cpuMs, ownCpuMs } from './lib/process.ts';
import { NAIVE_DELIVERY_QUEUE, startNaiveDelivery } from './lib/naive-delivery.ts';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: { deliveries: { type: 'string' }, naive: { type: 'boolean' } },
});
const count = Number(values.deliveries ?? 3_000);
const CHUNK = 500;

const postgres = await startBenchPostgres({
  durable: true,
  settings: {
    shared_preload_libraries: 'pg_stat_statements',
    'pg_stat_statements.track': 'all',
    'pg_stat_statements.track_planning': 'on',
  },
});
const sink = await startWebhookSink(() => ({ status: 204 }));
try {
  const url = await postgres.database('profile_destinations');
  const pool = createPool({ connectionString: url, max: 4 });
  await pool.query('create extension if not exists pg_stat_statements');
  await recordEvents(pool, count);
  const sender = createSenderBoss(url, { applicationName: 'webhook-inbox-bench' });
  await sender.start();
  let enqueue: (from: number, to: number) => Promise<unknown>;
  let stop: () => Promise<void>;
  if (values.naive) {
    const body = (
      await pool.query<{ payload: string }>(
        'select payload::text as payload from webhook_event_payloads limit 1',
      )
    ).rows[0]!.payload;
    const naive = await startNaiveDelivery(url, sink.url, SECRET, 16);
    enqueue = (from, to) =>
      sender.insert(
        NAIVE_DELIVERY_QUEUE,
        Array.from({ length: to - from }, (_, i) => ({
          data: { id: eventIdempotencyKey('bench', `e${from + i + 1}`, 'naive'), body },
        })),
      );
    stop = () => naive.stop();
  } else {
    const destinations = createDestinations({
      connectionString: url,
      destinations: parseDestinations(
        `destinations:${destinationYaml('fast', sink.url, 16)}\n`,
        'bench.yaml',
      ),
      log: pino({ level: 'silent' }),
    });
    await destinations.start();
    await destinations.work();
    enqueue = (from, to) =>
      sender.insert(
        destinationQueue('fast'),
        Array.from({ length: to - from }, (_, i) => ({
          data: { provider: 'bench', eventId: `e${from + i + 1}`, attempt: 1 },
        })),
      );
    stop = () => destinations.stop();
  }

  await pool.query('select pg_stat_statements_reset()');
  const postmaster = postgres.postmasterPid();
  const [ownBefore, pgBefore, started] = [
    ownCpuMs(),
    cpuMs(postmaster, { children: true }),
    performance.now(),
  ];
  for (let from = 0; from < count; from += CHUNK) await enqueue(from, Math.min(count, from + CHUNK));
  while (sink.requests.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (performance.now() - started) / 1000;
  const own = (ownCpuMs() - ownBefore) / count;
  const database = (cpuMs(postmaster, { children: true }) - pgBefore) / count;
  const { rows } = await pool.query<{ query: string; calls: string; planMs: number; execMs: number }>(
    `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls, total_plan_time as "planMs",
            total_exec_time as "execMs"
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      order by total_plan_time + total_exec_time desc limit 12`,
  );
  await stop();
  await sender.stop({ graceful: false, close: true });
  await pool.end();

  const line = (s: string) => process.stdout.write(`${s}\n`);
  line(
    `# ${values.naive ? 'naive forwarder' : 'inbox destination'}: ${count} deliveries, ${(count / seconds).toFixed(0)}/s; ` +
      `CPU per delivery: this process ${own.toFixed(2)} ms, PostgreSQL ${database.toFixed(2)} ms`,
  );
  line(
    '\n| calls/delivery | planning ms/delivery | execution ms/delivery | statement |\n|---:|---:|---:|---|',
  );
  for (const r of rows) {
    line(
      `| ${(Number(r.calls) / count).toFixed(2)} | ${(r.planMs / count).toFixed(3)} | ${(r.execMs / count).toFixed(3)} | ${r.query.slice(0, 120).replaceAll('|', '\\|')} |`,
    );
  }
} finally {
  await sink.close();
  await postgres.stop();
}
