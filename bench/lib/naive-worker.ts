/**
 * The worker benchmark's fair baseline: the example's three checkout effects written the way a team would without
 * the inbox package, as one plain pg-boss `work()` handler with no ledger. Each job carries the Stripe event
 * itself; each event upserts its account, sends its welcome email and records its subscription, one autocommit
 * statement each, the events of a batch side by side. It calls the example's own effect functions on the same
 * Drizzle code, the same pooled SMTP transport (`createMailer`) and the same pool settings as the inbox worker
 * (pool of 20, `synchronous_commit=off`), fetched exactly as the inbox worker fetches (batches of 50, 4 in flight,
 * no NOTIFY, a 0.5 s poll, burst while batches come back full). What it lacks is the cost of exactly-once: no
 * attempt bookkeeping, no claims or marks, no settlement, and an email sent again on every retry.
 *
 *   node naive-worker.ts <database url> <smtp url>    prints "ready" once working; SIGTERM stops it
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createDb } from '../../packages/db/src/index.ts';
import type { StripeInboxEvent } from '../../packages/inbox/src/stripe.ts';
import {
  provisionAccount,
  recordCheckoutSubscription,
  sendWelcomeEmail,
} from '../../apps/worker/src/effects/stripe.ts';
import { createLogger } from '../../apps/worker/src/logger.ts';
import { createMailer } from '../../apps/worker/src/mail.ts';
import { insertJobs } from './insert-jobs.ts';
import { printError, startBaselineBoss } from './raw-boss.ts';

export const NAIVE_QUEUE = 'bench-naive-checkout';
/** This program's path, to run it as a process. */
export const NAIVE_WORKER = fileURLToPath(import.meta.url);

type Checkout = StripeInboxEvent<'checkout.session.completed'>;

/** Enqueues checkout events (their payload text) for the naive worker, in chunks (`insertJobs`). */
export async function enqueueNaive(url: string, payloads: readonly string[]): Promise<void> {
  const boss = await startBaselineBoss(url, NAIVE_QUEUE, 2);
  try {
    await insertJobs(
      boss,
      NAIVE_QUEUE,
      payloads.map((text) => ({ data: JSON.parse(text) as object })),
    );
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

async function work(url: string, smtpUrl: string): Promise<void> {
  const log = createLogger('silent');
  const pool = new pg.Pool({ connectionString: url, max: 20, options: '-c synchronous_commit=off' });
  const db = createDb(pool);
  const mailer = createMailer({ smtpUrl, from: 'bench@example.test', dir: '', logger: log });
  const welcome = sendWelcomeEmail({ mailer, messageIdDomain: 'example.test' }).run;
  const boss = await startBaselineBoss(url, NAIVE_QUEUE, 7, printError);
  await boss.work<Checkout['payload']>(
    NAIVE_QUEUE,
    { batchSize: 50, localConcurrency: 4, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
    async (jobs) => {
      await Promise.all(
        jobs.map(async (job) => {
          const payload = job.data;
          const event = {
            provider: 'stripe',
            eventId: payload.id,
            type: payload.type,
            headers: {},
            receivedAt: new Date(),
            payload,
          } as Checkout;
          const base = { event, attempt: 1, log };
          await provisionAccount({
            ...base,
            effect: 'provisionAccount',
            idempotencyKey: '',
            tx: db as never,
          });
          const key = `welcome:${payload.id}`;
          await welcome({
            ...base,
            effect: 'sendWelcomeEmail',
            idempotencyKey: key,
            db,
            holdLease: async () => {},
          });
          await recordCheckoutSubscription({
            ...base,
            effect: 'recordCheckoutSubscription',
            idempotencyKey: '',
            tx: db as never,
          });
        }),
      );
    },
  );
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void boss
      .stop({ graceful: true, timeout: 5_000 })
      .then(() => {
        mailer.close();
        return pool.end();
      })
      .then(() => process.exit(0));
  });
}

if (process.argv[1] === NAIVE_WORKER) {
  const [url, smtpUrl] = process.argv.slice(2);
  if (!url || !smtpUrl) throw new Error('usage: node naive-worker.ts <database url> <smtp url>');
  await work(url, smtpUrl);
}
