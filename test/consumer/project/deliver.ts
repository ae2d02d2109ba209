/**
 * The consumer test's stand-in for Stripe delivering to a receiver: one `charge.refunded` event signed with the
 * official `stripe` package, verified by the inbox's Stripe provider and recorded with `ingest()` (what the
 * receiver does with a delivery), twice: the second is a redelivery. Prints the two outcomes as JSON.
 *
 *   DATABASE_URL=... node deliver.ts <event id> <webhook secret>
 */
import { createSenderBoss, ensureQueues, ingest, stripeProvider } from '@webhook-inbox/inbox';
import pg from 'pg';
import Stripe from 'stripe';

const url = process.env['DATABASE_URL'];
const [eventId, secret] = process.argv.slice(2);
if (!url || !eventId || !secret)
  throw new Error('usage: DATABASE_URL=... node deliver.ts <event id> <secret>');

const payload = JSON.stringify({
  id: eventId,
  object: 'event',
  type: 'charge.refunded',
  api_version: '2025-03-31.basil',
  created: Math.floor(Date.now() / 1000),
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  data: {
    object: { id: 'ch_consumer_1', object: 'charge', amount: 2500, amount_refunded: 1200, refunded: false },
  },
});
const signature = new Stripe('sk_test_consumer').webhooks.generateTestHeaderString({ payload, secret });

const provider = stripeProvider({ secrets: [secret], toleranceSeconds: 300 });
const request = {
  rawBody: Buffer.from(payload),
  header: (name: string) => (name.toLowerCase() === 'stripe-signature' ? signature : undefined),
};
const pool = new pg.Pool({ connectionString: url, max: 2 });
const boss = createSenderBoss(url, { applicationName: 'consumer-deliver' });
await boss.start();
try {
  await ensureQueues(boss);
  const outcomes = [];
  for (let delivery = 0; delivery < 2; delivery++) {
    outcomes.push(await ingest({ pool, boss }, provider.verify(request, new Date())));
  }
  console.log(JSON.stringify(outcomes));
} finally {
  await boss.stop({ graceful: false, close: true });
  await pool.end();
}
