/**
 * The welcome email reaches the SMTP server, and at that moment PostgreSQL becomes unreachable for 3 s: the worker
 * (through a TCP proxy the test cuts: every connection reset, new ones refused) cannot mark the email sent. It
 * retries the mark until the database is back instead of failing the job, whose next attempt would send the
 * email again.
 */
import { createPool } from '@webhook-inbox/db';
import { TcpProxy, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../src/env.ts';
import { createLogger } from '../src/logger.ts';
import { startWorker, type Worker } from '../src/worker.ts';
import { startSmtpSink, type SmtpSink } from '@webhook-inbox/testing/smtp';
import {
  count,
  eventStatus,
  checkoutEvent,
  queueEnv,
  randomId,
  startProducer,
  TEST_QUEUE,
  type Producer,
} from '@webhook-inbox/scenarios/worker';

const OUTAGE_MS = 3_000;
// Long enough for the mark to be retried through the outage (the retries stop short of the job's expiry).
const QUEUE = { ...TEST_QUEUE, expireInSeconds: 30 };

const db = useTestDatabase();
let pool: pg.Pool;
let producer: Producer;
let proxy: TcpProxy;
let smtp: SmtpSink;
let worker: Worker | undefined;
let restoring: NodeJS.Timeout | undefined;
let cutAt: number | undefined;
const lines: Array<{ level: number; msg: string; time: number }> = [];
const output: string[] = [];

beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 2 });
  producer = await startProducer(pool, db.url, QUEUE);
  proxy = await TcpProxy.start(db.url);
  // The message is in (a real MTA would deliver it): the database goes, and the SMTP reply follows 200 ms later.
  smtp = await startSmtpSink({
    delayMs: () => {
      if (cutAt === undefined) {
        cutAt = Date.now();
        void proxy.cut();
        restoring = setTimeout(() => void proxy.restore(), OUTAGE_MS);
      }
      return 200;
    },
  });
  const logger = createLogger('info', {
    write: (line: string) => {
      output.push(line);
      lines.push(JSON.parse(line) as { level: number; msg: string; time: number });
    },
  });
  worker = await startWorker(
    parseConfig({
      DATABASE_URL: proxy.url(db.url),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'welcome@outage.test',
      WORKER_PORT: '0',
      WORKER_POLL_SECONDS: '0.5',
      WORKER_SUPERVISE_SECONDS: '1',
      ...queueEnv(QUEUE),
    }),
    { logger },
  );
});
afterAll(async () => {
  clearTimeout(restoring);
  await proxy?.restore();
  await worker?.close();
  await proxy?.close();
  await smtp?.close();
  await producer?.stop();
  await pool?.end();
});

it('the database goes right after the welcome email is sent: the mark waits for it, the email goes once', async () => {
  const email = 'outage@example.test';
  const event = checkoutEvent({ customer: randomId('cus'), subscription: null, email });
  await producer.send(event);

  await waitFor(async () => (await eventStatus(pool, event.eventId)) === 'processed', {
    timeout: 30_000,
    message: 'the event processed',
  });
  expect(cutAt).toBeDefined();
  expect(smtp.messages.filter((message) => message.to === email)).toHaveLength(1);
  // The first attempt did it all: no retry of the job.
  expect(
    await count(pool, 'select attempts as n from webhook_events where event_id = $1', [event.eventId]),
  ).toBe(1);
  expect(
    await count(
      pool,
      `select count(*)::int as n from effect_runs
        where event_id = $1 and effect = 'sendWelcomeEmail' and status = 'completed' and attempts = 1`,
      [event.eventId],
    ),
  ).toBe(1);

  const retries = lines.filter(
    (line) => line.msg === 'could not mark the effect done (database connection); retrying',
  );
  expect(retries.length).toBeGreaterThanOrEqual(3);
  expect(retries.every((line) => line.level === 40)).toBe(true);
  const marked = lines.find((line) => line.msg === 'effect marked done after the database came back');
  expect(marked!.time - cutAt!).toBeGreaterThanOrEqual(OUTAGE_MS - 100);
  // No payload in the logs: not the address, not the customer's name.
  expect(output.join('')).not.toContain(email);
});
