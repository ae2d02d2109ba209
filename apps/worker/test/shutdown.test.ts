/**
 * Graceful shutdown of the real worker process: SIGTERM stops fetching and lets the running effect finish (the
 * SMTP server holds it mid-send until the test lets it go); a second signal exits at once.
 */
import { createPool } from '@webhook-inbox/db';
import { configureQueues, type QueueSettings } from '@webhook-inbox/inbox';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { WORKER_ENTRY } from './support/entry.ts';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import {
  count,
  eventStatus,
  queueDrained,
  checkoutEvent,
  queueEnv,
  randomId,
  startProducer,
  TEST_QUEUE,
  type Producer,
  type RawEvent,
  spawnWorker,
  type WorkerProcess,
} from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();
let pool: pg.Pool;
let producer: Producer;
let smtp: SmtpSink;
const spawned: WorkerProcess[] = [];
// The server acknowledges a message only once the test releases it: the worker is signalled mid-send, however
// slow the machine.
let mailHold = Promise.resolve();
let releaseMail = () => {};
function holdMail(): void {
  mailHold = new Promise<void>((resolve) => (releaseMail = resolve));
}

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 2 });
  producer = await startProducer(pool, db.url);
  smtp = await startSmtpSink({ hold: () => mailHold });
});
afterAll(async () => {
  releaseMail();
  for (const worker of spawned) worker.kill('SIGKILL');
  await Promise.all(spawned.map((worker) => worker.exited));
  await smtp.close();
  await producer.stop();
  await pool.end();
});

/**
 * A graceful stop waits for the held send, so its job must not expire meanwhile (a retry would be left in the
 * queue); a job abandoned by a second signal is picked up by the next worker after the short test expiry.
 */
const PATIENT_QUEUE: QueueSettings = { ...TEST_QUEUE, expireInSeconds: 60 };

/** Records `event` with its job under `settings` (a job's expiry is fixed when it is sent). */
async function send(event: RawEvent, settings: QueueSettings): Promise<void> {
  await configureQueues(producer.boss, settings);
  await producer.send(event);
}

function start(settings: QueueSettings = TEST_QUEUE): WorkerProcess {
  const worker = spawnWorker(
    {
      DATABASE_URL: db.url,
      SMTP_URL: smtp.url,
      WORKER_POLL_SECONDS: '0.5',
      WORKER_SUPERVISE_SECONDS: '1',
      // Longer than any send the test holds.
      SHUTDOWN_TIMEOUT_MS: '30000',
      ...queueEnv(settings),
    },
    { entry: WORKER_ENTRY },
  );
  spawned.push(worker);
  return worker;
}

/** Waits until the event's email is being sent (claimed, not marked). */
async function sending(eventId: string): Promise<void> {
  await waitFor(
    async () =>
      (await count(
        pool,
        `select count(*)::int as n from effect_runs where event_id = $1 and effect = 'sendWelcomeEmail' and status = 'running'`,
        [eventId],
      )) === 1,
    { timeout: 120_000, message: 'the welcome email in flight' },
  );
}

describe('shutdown', () => {
  it('SIGTERM waits for the running effect, reports not healthy meanwhile, completes the event and exits 0', async () => {
    const event = checkoutEvent({ customer: randomId('cus'), subscription: null });
    holdMail();
    await send(event, PATIENT_QUEUE);
    const worker = start(PATIENT_QUEUE);
    await sending(event.eventId);
    const url = /"url":"(http:\/\/[^"]+)","msg":"worker listening/.exec(worker.output())?.[1];
    expect(url).toBeDefined();

    worker.kill('SIGTERM');
    await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.status === 503, {
      timeout: 15_000,
      interval: 50,
    });
    expect(worker.child.exitCode).toBeNull();
    releaseMail();
    expect(await worker.exited, worker.output()).toBe(0);
    // It finished what it had started: processed, one email, nothing left for a retry.
    expect(await eventStatus(pool, event.eventId)).toBe('processed');
    expect(await queueDrained(pool)).toBe(true);
    expect(smtp.messages.filter((m) => m.to === 'billz@supabase.io')).toHaveLength(1);
    // The inbox's worker logs its stop once, then the process its whole shutdown.
    expect(worker.output().match(/"msg":"worker stopped"/g)).toHaveLength(1);
    // In that order by their times: the lines themselves can reach stdout out of order at exit, when the last
    // asynchronous write is still in flight as the exit handler writes the rest synchronously.
    const at = (msg: string) =>
      worker
        .output()
        .split('\n')
        .filter((line) => line.includes(`"msg":"${msg}"`))
        .map((line) => (JSON.parse(line) as { time: number }).time)[0];
    expect(at('worker stopped')).toBeLessThanOrEqual(at('shutdown complete')!);
  }, 300_000);

  it('a second signal exits at once; the unfinished event is completed by the next worker', async () => {
    const event = checkoutEvent({
      customer: randomId('cus'),
      subscription: null,
      email: 'second@example.test',
    });
    holdMail();
    await send(event, TEST_QUEUE);
    const impatient = start();
    await sending(event.eventId);
    impatient.kill('SIGTERM');
    await waitFor(() => impatient.output().includes('"msg":"shutting down"'), {
      timeout: 15_000,
      interval: 20,
    });
    impatient.kill('SIGINT');
    expect(await impatient.exited).toBe(1);
    expect(impatient.output()).toContain('second signal: exiting now');

    releaseMail();
    const next = start();
    await waitFor(
      async () => (await eventStatus(pool, event.eventId)) === 'processed' && queueDrained(pool),
      { timeout: 120_000 },
    );
    next.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    // Cut off mid-send, the email may have been delivered already: then it went twice (the documented window).
    const copies = smtp.messages.filter((m) => m.to === 'second@example.test').length;
    expect(copies).toBeGreaterThanOrEqual(1);
    expect(copies).toBeLessThanOrEqual(2);
  }, 300_000);
});
