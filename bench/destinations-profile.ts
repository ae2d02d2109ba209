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
import { createPool } from '../packages/db/src/index.ts';
import { createSenderBoss } from '../packages/inbox/src/boss.ts';
import { startWebhookSink } from '../packages/testing/src/webhook-sink.ts';
import {
  destinationYaml,
  enqueue,
  enqueueNaiveDeliveries,
  recordedBody,
  recordEvents,
  SECRET,
  startDestinations,
} from './destinations.ts';
import { startBenchPostgres } from './lib/postgres.ts';
import { cpuMs, ownCpuMs } from './lib/process.ts';
import { startNaiveDelivery } from './lib/naive-delivery.ts';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: { deliveries: { type: 'string' }, naive: { type: 'boolean' } },
});
const count = Number(values.deliveries ?? 3_000);

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
  const sender = createSenderBoss(url, { applicationName: 'webhook-inbox-bench' });
  await sender.start();
  const ids = await recordEvents(pool, count);
  let enqueued: (ids: readonly string[]) => Promise<void>;
  let stop: () => Promise<void>;
  if (values.naive) {
    const body = await recordedBody(pool, ids[0]!);
    const naive = await startNaiveDelivery(url, sink.url, SECRET, 16);
    enqueued = (eventIds) => enqueueNaiveDeliveries(sender, body, eventIds);
    stop = () => naive.stop();
  } else {
    const destinations = await startDestinations(url, destinationYaml('fast', sink.url, 16));
    enqueued = (eventIds) => enqueue(sender, 'fast', eventIds);
    stop = () => destinations.stop();
  }

  await pool.query('select pg_stat_statements_reset()');
  const postmaster = postgres.postmasterPid();
  const [ownBefore, pgBefore, started] = [
    ownCpuMs(),
    cpuMs(postmaster, { children: true }),
    performance.now(),
  ];
  await enqueued(ids);
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
