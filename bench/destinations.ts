import { createPool } from '../packages/db/src/index.ts';
import { createSenderBoss } from '../packages/inbox/src/boss.ts';
import {
  createDestinations,
  destinationQueue,
  parseDestinations,
  type Destinations,
} from '../packages/inbox/src/destinations/index.ts';
import { createInbox } from '../packages/inbox/src/inbox.ts';
import { startProducer } from '../packages/inbox/src/testing.ts';
import { eventIdempotencyKey } from '../packages/inbox/src/effects/keys.ts';
import { insertEvents } from '../packages/testing/src/events.ts';
import { fixtureText } from '../packages/testing/src/fixtures.ts';
import { startWebhookSink, type Sink } from '../packages/testing/src/webhook-sink.ts';
import { pino } from 'pino';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { BenchContext } from './lib/context.ts';
import { NAIVE_DELIVERY_QUEUE, startNaiveDelivery } from './lib/naive-delivery.ts';
import { insertJobs } from './lib/insert-jobs.ts';
import { fixed, type BenchTable } from './lib/table.ts';
import { inTurns } from './lib/turns.ts';

const ROUNDS = 3;
const CONCURRENCY = 16;
const SLOW_MS = 5_000;
export const SECRET = Buffer.alloc(32, 7);
const WHSEC = `whsec_${SECRET.toString('base64')}`;
const log = pino({ level: 'silent' });

/**
 * Destinations (docs/destinations.md), three figures, each against a baseline of the same run:
 * - deliveries per second to a local `node:http` sink, the inbox's destination queue vs a naive forwarder (pg-boss
 *   jobs carrying the body, each one `fetch` POST signed the same way, the same fetching and concurrency), in
 *   alternating turns: each turn enqueues a batch of deliveries and times them until the sink received the last;
 * - the time from an event's recording to its destination's 2xx, events recorded at a steady pace through the
 *   whole path (the event's job fans out, the destination's queue delivers), p50 and p99;
 * - a healthy destination's rate with a slow one (5 s answers) and a down one (connections refused) fed the same
 *   events beside it, over its rate alone, in alternating turns (the three in one worker, as one group runs them).
 */
export async function destinationsBenchmark(ctx: BenchContext): Promise<BenchTable> {
  const url = await ctx.postgres.database('bench_destinations');
  const pool = createPool({ connectionString: url, max: 4 });
  const sender = createSenderBoss(url, { applicationName: 'webhook-inbox-bench' });
  await sender.start();
  const sinks: Sink[] = [];
  const sink = async (answerAfterMs = 0) => {
    const s = await startWebhookSink(() =>
      answerAfterMs === 0
        ? { status: 204 }
        : new Promise((resolve) => setTimeout(() => resolve({ status: 204 }), answerAfterMs)),
    );
    sinks.push(s);
    return s;
  };
  try {
    const perTurn = Math.max(200, Math.round((ctx.durationMs / 1000) * 40));
    const events = await recordEvents(pool, perTurn * ROUNDS * 4);
    let next = 0;
    const slice = () => events.slice(next, (next += perTurn));
    const body = await recordedBody(pool, events[0]!);

    // 1. Throughput: the inbox's destination vs the naive forwarder, both working all along, fed in turns.
    const ours = await sink();
    const theirs = await sink();
    const fast = await startDestinations(url, destinationYaml('fast', ours.url, CONCURRENCY));
    const naive = await startNaiveDelivery(url, theirs.url, SECRET, CONCURRENCY);
    const rate = { inbox: new Rate(), naive: new Rate() };
    ctx.log(`destinations: ${ROUNDS} rounds of ${perTurn} deliveries, inbox vs naive`);
    try {
      await inTurns(
        ['inbox', 'naive'] as const,
        ROUNDS,
        async (mode) => {
          const ids = slice();
          if (mode === 'inbox') {
            await rate.inbox.time(ours, ids.length, () => enqueue(sender, 'fast', ids));
          } else {
            await rate.naive.time(theirs, ids.length, () => enqueueNaiveDeliveries(sender, body, ids));
          }
        },
        { abba: true },
      );
    } finally {
      await fast.stop();
      await naive.stop();
    }

    // 2. Record to 2xx, at a steady pace through the event's job and the destination's queue.
    const paced = await sink();
    const latency = await recordToDelivery(ctx, url, pool, paced);

    // 3. Isolation: the healthy destination alone vs beside a slow and a down one, each turn its own worker.
    const healthy = await sink();
    const slow = await sink(SLOW_MS);
    const down = await sink();
    await down.down();
    const isolation = { alone: new Rate(), beside: new Rate() };
    ctx.log(`destinations: ${ROUNDS} rounds of ${perTurn} deliveries, healthy alone vs beside slow and down`);
    await inTurns(
      ['alone', 'beside'] as const,
      ROUNDS,
      async (mode, round) => {
        const name = `healthy_${mode}_${round}`;
        const yaml =
          destinationYaml(name, healthy.url, CONCURRENCY) +
          (mode === 'beside'
            ? destinationYaml('slow', slow.url, 4, 'timeout: 30s') +
              destinationYaml(
                'down',
                down.url,
                4,
                'retrySchedule: [0, 1s, 2s, 5s]\n    breaker: { failures: 5, probeAfter: 2s }',
              )
            : '');
        const destinations = await startDestinations(url, yaml);
        try {
          const ids = slice();
          await isolation[mode].time(healthy, ids.length, async () => {
            if (mode === 'beside') {
              await enqueue(sender, 'slow', ids);
              await enqueue(sender, 'down', ids);
            }
            await enqueue(sender, name, ids);
          });
        } finally {
          // The slow one's requests in flight are answered, then its and the down one's backlogs dropped.
          await destinations.stop({ timeoutMs: SLOW_MS + 2_000 });
          await pool.query(`delete from pgboss.job where name = any($1::text[])`, [
            [destinationQueue('slow'), destinationQueue('down')],
          ]);
          await pool.query(`update destination_slots set held_until = '-infinity', token = null`);
        }
      },
      { abba: true },
    );

    const ratio = rate.inbox.perSecond / rate.naive.perSecond;
    const kept = isolation.beside.perSecond / isolation.alone.perSecond;
    return {
      title:
        'Destinations: deliveries to a local node:http sink vs a naive forwarder, and isolation (same run)',
      columns: ['measurement', 'inbox', 'baseline', 'ratio', 'target'],
      rows: [
        {
          measurement: `deliveries /s (concurrency ${CONCURRENCY}) vs naive pg-boss + fetch`,
          inbox: fixed(rate.inbox.perSecond, 0),
          baseline: fixed(rate.naive.perSecond, 0),
          ratio: fixed(ratio, 2),
          target: '>= 0.80',
        },
        {
          measurement: 'the same turns timed from the enqueue (pickup and enqueue included)',
          inbox: fixed(rate.inbox.fromEnqueue, 0),
          baseline: fixed(rate.naive.fromEnqueue, 0),
          ratio: fixed(rate.inbox.fromEnqueue / rate.naive.fromEnqueue, 2),
          target: 'printed',
        },
        {
          measurement: 'healthy destination /s beside a slow and a down one vs alone',
          inbox: fixed(isolation.beside.perSecond, 0),
          baseline: fixed(isolation.alone.perSecond, 0),
          ratio: fixed(kept, 2),
          target: '>= 0.90',
        },
        {
          measurement: `record to 2xx, ms, p50 / p99 (${latency.count} events at ${latency.perSecond}/s)`,
          inbox: `${fixed(latency.p50, 0)} / ${fixed(latency.p99, 0)}`,
          baseline: '',
          ratio: '',
          target: 'printed',
        },
      ],
      notes: [
        `${ROUNDS} alternating rounds (ABBA) of ${perTurn} deliveries per turn; a turn is timed from the sink receiving its first delivery to its last (the rate while delivering; the enqueue and the pickup by fetchers idle for up to their 1 s poll are in the row timed from the enqueue)`,
        'inbox: 2 statements per delivery (the start: gate, event, ledger claim, concurrency slot; the end: attempt row, 2xx mark, breaker, slot freed); naive: none of them',
        `isolation: slow answers after ${SLOW_MS / 1000} s (concurrency 4), down refuses connections (its breaker opens after 5 failures); each turn a fresh worker, the slow and down backlogs dropped after it`,
        'record to 2xx: the event recorded by ingest(), its job fans out (0.5 s poll), the destination queue delivers (1 s poll when idle)',
      ],
    };
  } finally {
    await sender.stop({ graceful: false, close: true });
    for (const s of sinks) await s.close();
    await pool.end();
  }
}

/**
 * Deliveries timed in turns: the sum of counts over the sum of turn times. A turn's time runs from its first
 * delivery's arrival at the sink to its last's (`perSecond`: the rate while delivering), and, for information, from
 * the enqueue (`fromEnqueue`: adds the enqueue itself and the pickup, up to a polling interval of idle fetchers).
 */
class Rate {
  #count = 0;
  #ms = 0;
  #fromEnqueueMs = 0;

  get perSecond(): number {
    return this.#count / (this.#ms / 1000);
  }

  get fromEnqueue(): number {
    return this.#count / (this.#fromEnqueueMs / 1000);
  }

  /** Times `enqueue` and the sink receiving `count` more requests. */
  async time(sink: Sink, count: number, enqueue: () => Promise<unknown>): Promise<void> {
    const first = sink.requests.length;
    const target = first + count;
    const started = Date.now();
    await enqueue();
    while (sink.requests.length < target) await new Promise((resolve) => setTimeout(resolve, 5));
    const arrivals = sink.requests.slice(first, target).map((request) => request.receivedAt);
    const last = Math.max(...arrivals);
    // n arrivals span n - 1 intervals.
    this.#ms += ((last - Math.min(...arrivals)) * count) / (count - 1);
    this.#fromEnqueueMs += last - started;
    this.#count += count;
  }
}

export function destinationYaml(name: string, url: string, concurrency: number, extra = ''): string {
  return `
  ${name}:
    url: ${url}
    allowPrivateNetwork: true
    events: [{ source: bench }]
    body: raw
    concurrency: ${concurrency}
    secrets: [${WHSEC}]
    ${extra}`;
}

/** A worker delivering `yaml`'s destinations (the entries of `destinationYaml`), started. */
export async function startDestinations(url: string, yaml: string): Promise<Destinations> {
  const destinations = createDestinations({
    connectionString: url,
    destinations: parseDestinations(`destinations:${yaml}\n`, 'bench.yaml'),
    log,
  });
  await destinations.start();
  await destinations.work();
  return destinations;
}

/** Delivery jobs for `ids`, as a fan-out sends them. */
export async function enqueue(boss: PgBoss, destination: string, ids: readonly string[]): Promise<void> {
  const jobs = ids.map((eventId) => ({ data: { provider: 'bench', eventId, attempt: 1 } }));
  await insertJobs(boss, destinationQueue(destination), jobs);
}

/** The naive forwarder's jobs for `ids`, each carrying `body` (the recorded events all have the same one). */
export async function enqueueNaiveDeliveries(
  boss: PgBoss,
  body: string,
  ids: readonly string[],
): Promise<void> {
  const jobs = ids.map((id) => ({ data: { id: eventIdempotencyKey('bench', id, 'naive'), body } }));
  await insertJobs(boss, NAIVE_DELIVERY_QUEUE, jobs);
}

/** The body recorded for `eventId`, as the raw body of a delivery sends it. */
export async function recordedBody(pool: pg.Pool, eventId: string): Promise<string> {
  const { rows } = await pool.query<{ payload: string }>(
    'select payload::text as payload from webhook_event_payloads where event_id = $1',
    [eventId],
  );
  return rows[0]!.payload;
}

/** `count` processed events of the source `bench`, each with the Stripe checkout fixture as its payload. */
export async function recordEvents(pool: pg.Pool, count: number): Promise<string[]> {
  await insertEvents(
    pool,
    `insert into webhook_events (provider, event_id, type, status, received_at)
     select 'bench', 'e' || g, 'checkout.session.completed', 'processed', now() from generate_series(1, $1::int) g`,
    [count],
    '$3::jsonb',
    [fixtureText('stripe/checkout.session.completed.json')],
  );
  return Array.from({ length: count }, (_, i) => `e${i + 1}`);
}

/**
 * Events recorded by `ingest()` at a steady pace, with a worker running the destination's fan-out and its queue:
 * each event's time from its recording (`received_at`) to the sink's answer.
 */
async function recordToDelivery(ctx: BenchContext, url: string, pool: pg.Pool, sink: Sink) {
  const perSecond = 20;
  const count = Math.max(60, Math.round((ctx.durationMs / 1000) * perSecond));
  const destinations = createDestinations({
    connectionString: url,
    destinations: parseDestinations(
      `destinations:${destinationYaml('paced', sink.url, CONCURRENCY)}\n`.replace(
        'body: raw',
        'body: envelope',
      ),
      'bench.yaml',
    ),
    log,
  });
  const inbox = createInbox({ logger: log });
  destinations.register(inbox);
  await destinations.start();
  const worker = await inbox.start({ connectionString: url, pollingIntervalSeconds: 0.5 });
  await destinations.work();
  const producer = await startProducer(pool, url);
  ctx.log(`destinations: ${count} events at ${perSecond}/s, record to 2xx`);
  try {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await producer.send({ provider: 'bench', eventId: `p${i}`, type: 'paced', payload: { i } });
    }
    while (sink.requests.filter((r) => r.answeredAt).length < count) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await producer.stop();
    await worker.stop({ graceful: false });
    await destinations.stop();
  }
  const { rows } = await pool.query<{ eventId: string; at: number }>(
    `select event_id as "eventId", extract(epoch from received_at) * 1000 as at from webhook_events
      where provider = 'bench' and type = 'paced'`,
  );
  const recorded = new Map(rows.map((r) => [r.eventId, Number(r.at)]));
  const ms = sink.requests
    .map((r) => r.answeredAt! - recorded.get((JSON.parse(r.body) as { key: string }).key)!)
    .sort((a, b) => a - b);
  const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))]!;
  return { count, perSecond, p50: at(50), p99: at(99) };
}
