/**
 * Where the worker's drain spends its time, per event: the worker's CPU (a `--cpu-prof` profile of the worker
 * process, self time by function and by package) and the database's (`pg_stat_statements` over the drain:
 * statements, calls and execution time per event). The same drain as `pnpm bench -- --only=worker` (a backlog of
 * checkout events, three effects each, the worker's default batches), once, for reading, not for a ratio.
 * `--naive` profiles the bench's baseline instead (`lib/naive-worker.ts`: the same effects, no ledger), so the two
 * profiles can be read side by side. A profile's samples are the main thread's wall time: a write that waits for
 * the CPU (PostgreSQL woken on the same two cores) counts in full, so read its shares beside the CPU figure.
 *
 *   node bench/worker-profile.ts [--events=2000] [--out=/tmp/worker-profile] [--explain [--explain-ms=20]] [--naive]
 *     [--batch-size=50] [--concurrency=4] [--flags='--max-semi-space-size=8']   (the worker's; flags: Node's)
 *
 * `--explain` also logs the plan (EXPLAIN ANALYZE, nested statements too) of every statement slower than 20 ms
 * (`--explain-ms=0` for all) to `<out>/pglog/`: which statement's plan or trigger takes the time. Beside the worker's
 * CPU it prints PostgreSQL's (all its processes, from /proc) and the worker's system calls, per event: on two
 * shared CPUs the two compete for the same cores.
 */
import { chmod, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startSmtpSink } from '@webhook-inbox/testing/smtp';
import { checkoutEvent, startProducer } from '@webhook-inbox/scenarios/worker';
import { createPool } from '../packages/db/src/index.ts';
import { DEFAULT_QUEUE_SETTINGS } from '../packages/inbox/src/queue.ts';
import { startBenchPostgres } from './lib/postgres.ts';
import { cpuMs, memory, syscalls } from './lib/process.ts';
import { enqueueNaive, NAIVE_QUEUE, NAIVE_WORKER } from './lib/naive-worker.ts';
import {
  count,
  sendAll,
  spawnReady,
  stop,
  timeUntil,
  WORKER,
  workerStartFlags,
} from './lib/worker-process.ts';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    events: { type: 'string' },
    out: { type: 'string' },
    explain: { type: 'boolean' },
    'explain-ms': { type: 'string' },
    naive: { type: 'boolean' },
    'batch-size': { type: 'string' },
    concurrency: { type: 'string' },
    flags: { type: 'string' },
  },
});
const events = Number(values.events ?? 2_000);
const out = path.resolve(values.out ?? '/tmp/worker-profile');
await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, 'pglog'), { recursive: true });
// PostgreSQL may run as another user (as root, it runs as "postgres"): it writes its log here.
await chmod(path.join(out, 'pglog'), 0o777);
const explain: Record<string, string> = values.explain
  ? {
      'auto_explain.log_min_duration': values['explain-ms'] ?? '20ms',
      'auto_explain.log_analyze': 'on',
      'auto_explain.log_nested_statements': 'on',
      logging_collector: 'on',
      log_directory: path.join(out, 'pglog'),
    }
  : {};

const postgres = await startBenchPostgres({
  durable: process.env.BENCH_DURABLE !== '0',
  settings: {
    shared_preload_libraries: values.explain ? 'pg_stat_statements,auto_explain' : 'pg_stat_statements',
    'pg_stat_statements.track': 'all',
    'pg_stat_statements.track_planning': 'on',
    ...explain,
  },
});
const smtp = await startSmtpSink({ parse: false });
try {
  const url = await postgres.database('profile_worker');
  const pool = createPool({ connectionString: url, max: 18 });
  await pool.query('create extension if not exists pg_stat_statements');
  const event = (i: number) =>
    checkoutEvent({ customer: `cus_p_${i}`, subscription: `sub_p_${i}`, email: `p${i}@example.test` });
  if (values.naive) {
    await enqueueNaive(
      url,
      Array.from({ length: events }, (_, i) => event(i).payloadText),
    );
  } else {
    const producer = await startProducer(pool, url, DEFAULT_QUEUE_SETTINGS);
    await sendAll(events, (i) => producer.send(event(i)));
    await producer.stop();
  }
  const env: Record<string, string> = {
    DATABASE_URL: url,
    SMTP_URL: smtp.url,
    LOG_LEVEL: 'info',
    WORKER_PORT: '0',
    WORKER_BATCH_SIZE: values['batch-size'] ?? '50',
    WORKER_CONCURRENCY: values.concurrency ?? '4',
  };
  const flags = [...(values.flags?.split(' ').filter(Boolean) ?? []), '--cpu-prof', `--cpu-prof-dir=${out}`];
  // The naive handler takes its batches as the bench runs it (50 × 4), not from the environment.
  const worker = values.naive
    ? await spawnReady(process.execPath, [...flags, NAIVE_WORKER, url, smtp.url], {}, 'ready')
    : await spawnReady(process.execPath, [...workerStartFlags(), ...flags, WORKER], env, '"worker started"');
  const idleRss = memory(worker.pid!).rssMiB;
  await pool.query('select pg_stat_statements_reset()');
  const cpuBefore = cpuMs(worker.pid!);
  const postmaster = postgres.postmasterPid();
  const pgBefore = cpuMs(postmaster, { children: true });
  const ioBefore = syscalls(worker.pid!);
  const rate = await timeUntil(events, () =>
    values.naive
      ? count(pool, `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`, [
          NAIVE_QUEUE,
        ])
      : count(pool, `select count(*)::int as n from webhook_events where status = 'processed'`),
  );
  const cpu = (cpuMs(worker.pid!) - cpuBefore) / events;
  const pgCpu = (cpuMs(postmaster, { children: true }) - pgBefore) / events;
  const ioAfter = syscalls(worker.pid!);
  const peak = memory(worker.pid!).peakMiB;
  const idle = idleRss;
  const { rows } = await pool.query<{
    query: string;
    calls: string;
    ms: number;
    planMs: number;
    rows: string;
  }>(
    `select regexp_replace(query, '\\s+', ' ', 'g') as query, calls, total_exec_time as ms,
            total_plan_time as "planMs", rows
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      order by total_exec_time + total_plan_time desc`,
  );
  await stop(worker);
  await pool.end();

  const line = (s: string) => process.stdout.write(`${s}\n`);
  line(
    `# ${values.naive ? 'naive handler: ' : ''}drain of ${events} events (batches of ${env.WORKER_BATCH_SIZE}, ${env.WORKER_CONCURRENCY} in flight${values.flags ? `, ${values.flags}` : ''}): ${rate.perSecond.toFixed(0)}/s, worker CPU ${cpu.toFixed(2)} ms/event, RSS idle ${idle.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB`,
  );
  line(
    `# PostgreSQL CPU (all its processes) ${pgCpu.toFixed(2)} ms/event; worker syscalls per event: ${((ioAfter.writes - ioBefore.writes) / events).toFixed(2)} writes, ${((ioAfter.reads - ioBefore.reads) / events).toFixed(2)} reads, ${((ioAfter.switches - ioBefore.switches) / events).toFixed(2)} voluntary context switches`,
  );
  const totalCalls = rows.reduce((s, r) => s + Number(r.calls), 0);
  const totalMs = rows.reduce((s, r) => s + r.ms, 0);
  const totalPlanMs = rows.reduce((s, r) => s + r.planMs, 0);
  line(
    `\n## PostgreSQL: ${(totalCalls / events).toFixed(2)} statements/event, ${(totalMs / events).toFixed(3)} ms execution/event, ${(totalPlanMs / events).toFixed(3)} ms planning/event`,
  );
  line('| calls/event | ms/event | planning ms/event | rows/call | statement |');
  line('|---:|---:|---:|---:|---|');
  for (const r of rows.slice(0, 25)) {
    line(
      `| ${(Number(r.calls) / events).toFixed(3)} | ${(r.ms / events).toFixed(3)} | ${(r.planMs / events).toFixed(3)} | ${(Number(r.rows) / Number(r.calls)).toFixed(1)} | ${r.query.slice(0, 140).replaceAll('|', '\\|')} |`,
    );
  }

  const file = (await readdir(out)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${out}`);
  summarize(JSON.parse(await readFile(path.join(out, file), 'utf8')) as Profile, line);
} finally {
  await smtp.close();
  await postgres.stop();
}

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time by function and by package (the whole life of the worker process: start-up, drain, stop). */
function summarize(profile: Profile, line: (s: string) => void): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!;
    const us = profile.timeDeltas[i] ?? 0;
    if (frame.functionName === '(idle)') return;
    total += us;
    const where = packageOf(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    pkg.set(where.split(':')[0]!.split('/')[0]!, (pkg.get(where.split(':')[0]!.split('/')[0]!) ?? 0) + us);
  });
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  line(`\n## worker CPU (profile, not idle): ${(total / 1000).toFixed(0)} ms in all`);
  line('| share | by package |\n|---:|---|');
  for (const [k, us] of top(pkg, 15)) line(`| ${((100 * us) / total).toFixed(1)}% | ${k} |`);
  line('\n| share | self time by function |\n|---:|---|');
  for (const [k, us] of top(fn, 30)) line(`| ${((100 * us) / total).toFixed(1)}% | ${k} |`);
}

function packageOf(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    const name = rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
    return `${name}/${rest.at(-1)}`;
  }
  if (url.startsWith('node:')) return url;
  const m = /\/(packages|apps)\/([^/]+)\/src\/(.*)$/.exec(url);
  return m ? `@webhook-inbox/${m[2]}/${m[3]}` : url;
}
