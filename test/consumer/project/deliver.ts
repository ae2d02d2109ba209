/**
 * The consumer test's stand-in for Stripe: one `charge.refunded` event signed with the official `stripe`
 * package, POSTed twice to the receiver the team runs with `npx webhook-inbox receiver` (the second is a
 * redelivery). Prints the two answers (status and body) as JSON.
 *
 *   node deliver.ts <receiver base URL> <event id> <webhook secret>
 */
import Stripe from 'stripe';

const [baseUrl, eventId, secret] = process.argv.slice(2);
if (!baseUrl || !eventId || !secret)
  throw new Error('usage: node deliver.ts <receiver URL> <event id> <secret>');

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

const answers = [];
for (let delivery = 0; delivery < 2; delivery++) {
  const response = await fetch(new URL('/webhooks/stripe', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
  });
  answers.push({ status: response.status, body: (await response.json()) as unknown });
}
console.log(JSON.stringify(answers));
