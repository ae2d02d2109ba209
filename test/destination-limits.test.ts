/**
 * A destination's rate limit and concurrency hold across worker processes: two real workers (apps/worker, started
 * with the same destinations file) deliver to one limited loopback sink each. The rate is measured at the sink,
 * over a count of deliveries and their arrival times by the sink's clock; the concurrency is the most requests the
 * sink held at once. With a limit per process, two workers would deliver at twice the rate and twice the
 * concurrency.
 */
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { createPool } from '@webhook-inbox/db';
import {
  startWebhookSink,
  useStarted,
  useTempFiles,
  useTestDatabase,
  waitFor,
  type Sink,
} from '@webhook-inbox/testing';
import { queueEnv, spawnWorker, startProducer, type WorkerProcess } from '@webhook-inbox/scenarios/worker';
import { afterAll, expect, it } from 'vitest';

const WORKER_ENTRY = fileURLToPath(new URL('../apps/worker/src/server.ts', import.meta.url));
const RATE = 10;
const CONCURRENCY = 2;
const EVENTS = 80;
/** How long the narrow sink holds each answer: long enough that deliveries overlap. */
const HOLD_MS = 150;

const db = useTestDatabase();
const files = useTempFiles('destination-limits-');
const pool = useStarted(
  'the pool',
  () => Promise.resolve(createPool({ connectionString: db.url, max: 4 })),
  (p) => p.end(),
);
const sinks: Sink[] = [];
const workers: WorkerProcess[] = [];
afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  for (const sink of sinks) await sink.close();
});

async function startWorker(destinationsFile: string): Promise<WorkerProcess> {
  const worker = spawnWorker(
    {
      DATABASE_URL: db.url,
      WEBHOOK_DESTINATIONS_FILE: destinationsFile,
      WORKER_POLL_SECONDS: '0.5',
      ...queueEnv(),
    },
    { entry: WORKER_ENTRY },
  );
  workers.push(worker);
  await waitFor(
    () => {
      if (worker.child.exitCode !== null) throw new Error(`the worker exited:\n${worker.output()}`);
      return worker.output().includes('"worker started"');
    },
    { timeout: 180_000, message: 'a worker started' },
  );
  return worker;
}

it('holds a rate limit and a concurrency across two worker processes, within 10 %', async () => {
  const rated = await startWebhookSink();
  const narrow = await startWebhookSink(
    () => new Promise((resolve) => setTimeout(() => resolve({ status: 200 }), HOLD_MS)),
  );
  sinks.push(rated, narrow);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const file = files.write(
    'destinations.yaml',
    `
destinations:
  rated:
    url: ${rated.url}
    allowPrivateNetwork: true
    events: [{ source: shop }]
    rateLimit: ${RATE}
    concurrency: 10
    secrets: [${secret}]
  narrow:
    url: ${narrow.url}
    allowPrivateNetwork: true
    events: [{ source: shop }]
    concurrency: ${CONCURRENCY}
    secrets: [${secret}]
`,
  );
  // The events are recorded before the workers start, so the limits, not the fan-out, pace the deliveries.
  const producer = await startProducer(pool.value, db.url);
  try {
    for (let i = 0; i < EVENTS; i++) {
      await producer.send({ provider: 'shop', eventId: `l${i}`, type: 'a', payload: { i } });
    }
  } finally {
    await producer.stop();
  }
  await Promise.all([startWorker(file), startWorker(file)]);

  await waitFor(() => rated.requests.length >= EVENTS && narrow.requests.length >= EVENTS, {
    timeout: 300_000,
    message: 'every event delivered to both destinations',
  });
  // Both workers delivered to each destination.
  const { rows } = await pool.value.query<{ effect: string; workers: number }>(
    `select effect, count(distinct worker)::int as workers from effect_attempts
      where effect in ('destination.rated', 'destination.narrow') and response_status is not null
      group by effect order by effect`,
  );
  expect(rows).toEqual([
    { effect: 'destination.narrow', workers: 2 },
    { effect: 'destination.rated', workers: 2 },
  ]);

  // The rate over the deliveries after the first 10 (both workers running by then), by the sink's clock.
  const arrivals = rated.requests.map((r) => r.receivedAt).sort((a, b) => a - b);
  const measured = arrivals.slice(10);
  const rate = (measured.length - 1) / ((measured.at(-1)! - measured[0]!) / 1000);
  console.log(
    `rate limit ${RATE}/s across 2 workers: ${rate.toFixed(2)}/s over ${measured.length} deliveries; ` +
      `concurrency ${CONCURRENCY}: at most ${narrow.maxInFlight()} in flight`,
  );
  expect(rate).toBeLessThanOrEqual(RATE * 1.1);
  expect(rate).toBeGreaterThanOrEqual(RATE * 0.9);
  expect(narrow.maxInFlight()).toBeLessThanOrEqual(CONCURRENCY);
  expect(narrow.maxInFlight()).toBe(CONCURRENCY);
  expect(new Set(rated.requests.map((r) => r.headers['webhook-id'])).size).toBe(EVENTS);
  expect(new Set(narrow.requests.map((r) => r.headers['webhook-id'])).size).toBe(EVENTS);
});
