import { breakGlassSession } from '@webhook-inbox/testing/console';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import pino from 'pino';
import { createConsole } from '@webhook-inbox/console';
import { createPool } from '../packages/db/src/index.ts';
import { createSenderBoss } from '../packages/inbox/src/boss.ts';
import { fillConsoleTables } from './lib/console-fill.ts';
import type { BenchContext } from './lib/context.ts';
import { fixed, type BenchTable } from './lib/table.ts';

const ADMIN_TOKEN = 'bench-console-admin-token-0123456789';
/** Events in the table by default: the size the console must stay fast on. */
const DEFAULT_EVENTS = 1_000_000;

interface Timing {
  requests: number;
  p50: number;
  p95: number;
}

/**
 * The console's pages over HTTP on a large inbox (`--events`, default 1,000,000, filled by `fillConsoleTables`:
 * 85% processed, 5% failed, 10% dead, over 30 days, three providers, a ledger row each, the failing effects'
 * attempts, 20 bulk replays), each page requested one at a time by a signed-in client. Baseline: the sign-in page of the same server, which
 * reads no table, so the ratio is what the database work adds to a page.
 */
export async function consoleBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const events = ctx.events ?? DEFAULT_EVENTS;
  const url = await ctx.postgres.database('bench_console');
  const pool = createPool({ connectionString: url, max: 8, applicationName: 'bench-console' });
  const boss = createSenderBoss(url, { applicationName: 'bench-console' });
  let server: ServerType | undefined;
  try {
    ctx.log(`console: inserting ${events.toLocaleString('en')} events`);
    const fill = await fillConsoleTables(pool, events);
    await boss.start();
    const operatorConsole = createConsole({
      pool,
      boss,
      adminToken: ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
    });
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: operatorConsole.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`;
    const cookie = await breakGlassSession(base, ADMIN_TOKEN, 'bench');

    const perPage = Math.max(30, Math.round(ctx.durationMs / 100));
    const pages: Array<[string, (i: number) => string]> = [
      ['sign-in page (baseline: no query)', () => '/login'],
      ['events, no filter (newest 50)', () => '/events'],
      ['events, status failed', () => '/events?status=failed'],
      // 1 in 50 failed events has cus_20; none has cus_7, so that search reads every failed event (5% of all).
      [
        'events, failed, customer (1 in 50 match)',
        () => '/events?status=failed&path=data.object.customer&value=cus_20',
      ],
      [
        'events, failed, customer (no match)',
        () => '/events?status=failed&path=data.object.customer&value=cus_7',
      ],
      ['events, stripe + type, last 24h', () => '/events?provider=stripe&type=invoice.paid&from=24h'],
      // A payload search with no other filter: the bounded scan (the newest PAYLOAD_SCAN events) and its message.
      [
        'events, customer by payload path, no other filter',
        () => '/events?path=data.object.customer&value=cus_7',
      ],
      // The search box: the subject (GIN), an id prefix (primary key), text that matches nothing.
      ['search, a customer (subject)', (i) => `/events?q=cus_${(i * 3) % 1000}`],
      ['search, an email (subject)', (i) => `/events?q=${(i * 3) % 1000}%40example.com`],
      ['search, an event id prefix', (i) => `/events?q=evt_bench_${pick(i, events)}`.slice(0, -1)],
      ['search, no match', () => '/events?q=nobody%40example.com'],
      ['event detail (a random event)', (i) => `/event?provider=stripe&id=evt_bench_${pick(i, events)}`],
      [
        'event detail (a dead event, its attempts)',
        (i) => `/event?provider=stripe&id=evt_bench_${deadPick(i, events)}`,
      ],
      ['overview', () => '/'],
      ['overview, its 5-second refresh (24 h)', () => '/overview/figures?window=24h'],
      ['dead letters', () => '/dead'],
      ['failures by cause', () => '/failures'],
      ['a failure group (its events)', () => `/failures/group?${GROUP}`],
      ['bulk replays (their outcomes)', () => '/operations'],
      ['the largest bulk replay', () => '/operations/1'],
    ];
    const results: Array<[string, Timing]> = [];
    for (const [name, path] of pages) {
      ctx.log(`console: ${name}, ${perPage} requests`);
      results.push([name, await time(base, cookie, path, perPage)]);
    }
    const baseline = results[0]![1];
    return {
      title: `Console: page latency over HTTP with ${events.toLocaleString('en')} events in the table`,
      columns: ['page', 'requests', 'p50 ms', 'p95 ms', 'p95 vs sign-in'],
      rows: results.map(([page, t]) => ({
        page,
        requests: t.requests,
        'p50 ms': fixed(t.p50, 1),
        'p95 ms': fixed(t.p95, 1),
        'p95 vs sign-in': `${fixed(t.p95 / baseline.p95, 1)}x`,
      })),
      notes: [
        `${fill.failed.toLocaleString('en')} failed and ${fill.dead.toLocaleString('en')} dead events (effects failing with 5 causes), ` +
          `20 bulk replays (the largest of ${fill.largestOperation.toLocaleString('en')} events); ` +
          `filled in ${fixed(fill.seconds, 0)} s (insert ... select, then vacuum analyze)`,
        'one client, one request at a time, 5 uncounted first',
        'the console in this process (as in the receiver), its pool of 8; `--events=N` for a smaller table',
      ],
    };
  } finally {
    if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await pool.end();
  }
}

/** One of the failure groups the fill makes: `syncCrm` refused a connection, its address normalized. */
const GROUP = new URLSearchParams({
  group: 'default',
  effect: 'syncCrm',
  fingerprint: 'connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>',
}).toString();

/** A dead stripe event's number (i % 20 = 1 and a multiple of 3), spread over the table. */
function deadPick(i: number, events: number): number {
  return 60 * ((i * 7919) % Math.floor(events / 60)) + 21;
}

/** A stripe event's number among those inserted (stripe's are the multiples of 3), spread over the table. */
function pick(i: number, events: number): number {
  return 3 * (1 + ((i * 7919) % Math.floor(events / 3)));
}

async function time(
  base: string,
  cookie: string,
  path: (i: number) => string,
  requests: number,
): Promise<Timing> {
  const ms: number[] = [];
  // The first few (a new connection, cold caches, JIT) are not counted.
  for (let i = -5; i < requests; i++) {
    const started = performance.now();
    const response = await fetch(`${base}${path(Math.abs(i))}`, { headers: { cookie, accept: 'text/html' } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path(Math.abs(i))} answered ${response.status}`);
    if (i >= 0) ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)]!;
  return { requests, p50: at(0.5), p95: at(0.95) };
}
