/**
 * Scenario 9, bad input at volume: property-based (fast-check) requests against a running receiver process over
 * HTTP: random and mutated Stripe and Shopify signature headers (absent, garbage, another secret, a flipped or
 * truncated signature, an old or future timestamp, another scheme), bodies changed after signing, random bodies
 * and JSON, absent or random Shopify headers, unknown providers, oversized bodies. Whatever comes in: never a 2xx
 * for a bad signature, never a 5xx, the process stays up; correctly signed events are accepted, and nothing but
 * those is ever recorded.
 */
import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signShopify, signStripe } from '@webhook-inbox/providers';
import {
  chaosReceiverEnv,
  crashLines,
  report,
  startReceiver,
  type SpawnedReceiver,
} from './support/cluster.ts';
import fc from 'fast-check';
import {
  getStatus,
  post,
  SHOPIFY_SECRET,
  STRIPE_SECRET,
  type Delivery,
} from '@webhook-inbox/scenarios/receiver';

const db = useTestDatabase();
const RUNS = 1_000;
const MAX_BODY_BYTES = 2_048;

let receiver: SpawnedReceiver;
const tally = { requests: 0, accepted: 0, duplicate: 0, statuses: {} as Record<string, number> };

beforeAll(async () => {
  receiver = await startReceiver(
    chaosReceiverEnv(db.url, { WEBHOOK_MAX_BODY_BYTES: String(MAX_BODY_BYTES) }),
  );
});

afterAll(async () => {
  if (receiver && receiver.child.exitCode === null) receiver.child.kill('SIGKILL');
  await receiver?.exited;
});

/** Sends one request and checks what must hold for any request. */
async function send(delivery: Delivery): Promise<number> {
  const response = await post(receiver.url, delivery, { timeoutMs: 10_000 });
  tally.requests++;
  tally.statuses[response.status] = (tally.statuses[response.status] ?? 0) + 1;
  if (response.status === 200) {
    const outcome = (JSON.parse(response.body) as { status: 'accepted' | 'duplicate' }).status;
    tally[outcome]++;
  }
  expect(response.status, response.body).toBeLessThan(500);
  return response.status;
}

const ascii = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });

/** A body: a well-formed event of the provider, random text (any code points), or random JSON. */
const body = (event: fc.Arbitrary<string>) =>
  fc.oneof(
    event.map((text) => ({ kind: 'event' as const, text })),
    fc.string({ unit: 'binary', maxLength: 300 }).map((text) => ({ kind: 'random' as const, text })),
    fc.json({ maxDepth: 3 }).map((text) => ({ kind: 'json' as const, text })),
    // Larger than the limit: 413, whatever the signature.
    fc.constant({
      kind: 'oversized' as const,
      text: `{"id":"evt_big","pad":"${'x'.repeat(MAX_BODY_BYTES)}"}`,
    }),
  );

const stripeEvent = fc
  .record({
    id: fc.stringMatching(/^evt_[A-Za-z0-9]{6,24}$/),
    type: fc.constantFrom(
      'checkout.session.completed',
      'customer.subscription.updated',
      'invoice.paid',
      'x.y',
    ),
    created: fc.integer({ min: 1_500_000_000, max: 1_900_000_000 }),
  })
  .map((event) => JSON.stringify({ ...event, object: 'event', data: { object: {} } }));

const shopifyOrder = fc
  .record({ id: fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }), total_price: fc.constantFrom('1.00', '99.99') })
  .map(({ id, total_price }) => `{"id":${id},"total_price":"${total_price}"}`);

/** Ways to break a signature; `none` leaves it valid. */
const SIGNATURE_MUTATIONS = [
  'none',
  'absent',
  'garbage',
  'other-secret',
  'body-changed',
  'flipped',
  'truncated',
  'empty',
] as const;

/** A mutation, with a valid signature a good share of the time (so that the accepting path is exercised too). */
function mutations<T extends string>(others: readonly T[]): fc.Arbitrary<'none' | T> {
  return fc.oneof(
    { arbitrary: fc.constant('none' as const), weight: 4 },
    { arbitrary: fc.constantFrom(...others), weight: 6 },
  );
}

function flip(text: string, at: number): string {
  if (text.length === 0) return 'x';
  const i = at % text.length;
  const c = text[i] === 'a' ? 'b' : 'a';
  return text.slice(0, i) + c + text.slice(i + 1);
}

describe('bad input at volume against the receiver process', () => {
  it(`Stripe: ${RUNS} random and mutated deliveries: no 2xx without a valid signature, no 5xx`, async () => {
    const mutation = fc.constantFrom(
      ...SIGNATURE_MUTATIONS,
      'old-timestamp',
      'future-timestamp',
      'other-scheme',
    );
    await fc.assert(
      fc.asyncProperty(
        body(stripeEvent),
        mutation,
        ascii(200),
        fc.nat(),
        fc.constantFrom('Stripe-Signature', 'stripe-signature', 'STRIPE-SIGNATURE'),
        async (payload, how, garbage, at, headerName) => {
          const now = Math.floor(Date.now() / 1000);
          let text = payload.text;
          let signature: string | undefined = signStripe({ payload: text, secret: STRIPE_SECRET });
          if (how === 'absent') signature = undefined;
          else if (how === 'garbage') signature = garbage;
          else if (how === 'other-secret')
            signature = signStripe({ payload: text, secret: 'whsec_attacker' });
          else if (how === 'body-changed') text = `${text} `;
          else if (how === 'flipped') signature = flip(signature, at + signature.indexOf('v1=') + 3);
          else if (how === 'truncated') signature = signature.slice(0, signature.length - 1 - (at % 20));
          else if (how === 'empty') signature = '';
          else if (how === 'old-timestamp')
            signature = signStripe({
              payload: text,
              secret: STRIPE_SECRET,
              timestamp: now - 301 - (at % 1e6),
            });
          else if (how === 'future-timestamp')
            signature = signStripe({
              payload: text,
              secret: STRIPE_SECRET,
              timestamp: now + 301 + (at % 1e6),
            });
          else if (how === 'other-scheme') signature = signature.replace('v1=', 'v0=');
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (signature !== undefined) headers[headerName] = signature;
          const status = await send({
            provider: 'stripe',
            path: '/webhooks/stripe',
            body: text,
            headers,
            key: '',
          });
          if (how !== 'none') expect(status, how).not.toBe(200);
          if (payload.kind === 'oversized') expect(status).toBe(413);
          else if (how === 'none' && payload.kind === 'event') expect(status).toBe(200);
          else expect([200, 400]).toContain(status);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(`Shopify: ${RUNS} random and mutated deliveries: no 2xx without a valid signature, no 5xx`, async () => {
    const header = (value: fc.Arbitrary<string>) => fc.oneof(value, fc.constant(undefined), ascii(60));
    await fc.assert(
      fc.asyncProperty(
        body(shopifyOrder),
        mutations(SIGNATURE_MUTATIONS.filter((m) => m !== 'none')),
        ascii(80),
        fc.nat(),
        fc.record({
          topic: header(fc.constantFrom('orders/create', 'app/uninstalled')),
          shop: header(fc.constant('fuzz-shop.myshopify.com')),
          eventId: header(fc.uuid()),
          webhookId: header(fc.uuid()),
        }),
        async (payload, how, garbage, at, h) => {
          let text = payload.text;
          let hmac: string | undefined = signShopify({ payload: text, secret: SHOPIFY_SECRET });
          if (how === 'absent') hmac = undefined;
          else if (how === 'garbage') hmac = garbage;
          else if (how === 'other-secret') hmac = signShopify({ payload: text, secret: 'shpss_attacker' });
          else if (how === 'body-changed') text = `${text} `;
          else if (how === 'flipped') hmac = flip(hmac, at);
          else if (how === 'truncated') hmac = hmac.slice(0, hmac.length - 1 - (at % 20));
          else if (how === 'empty') hmac = '';
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (hmac !== undefined) headers['X-Shopify-Hmac-Sha256'] = hmac;
          if (h.topic !== undefined) headers['X-Shopify-Topic'] = h.topic;
          if (h.shop !== undefined) headers['X-Shopify-Shop-Domain'] = h.shop;
          if (h.eventId !== undefined) headers['X-Shopify-Event-Id'] = h.eventId;
          if (h.webhookId !== undefined) headers['X-Shopify-Webhook-Id'] = h.webhookId;
          const status = await send({
            provider: 'shopify',
            path: '/webhooks/shopify',
            body: text,
            headers,
            key: '',
          });
          if (how !== 'none') expect(status, how).not.toBe(200);
          // An order body is no app/uninstalled payload (a Shop object naming the shop): that topic is a 400.
          const wellFormed =
            h.topic === 'orders/create' &&
            h.shop === 'fuzz-shop.myshopify.com' &&
            /^[0-9a-f-]{36}$/.test(h.eventId ?? '');
          if (payload.kind === 'oversized') expect(status).toBe(413);
          else if (how === 'none' && payload.kind === 'event' && wellFormed) expect(status).toBe(200);
          else expect([200, 400]).toContain(status);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('unknown providers and odd paths: 404, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), ascii(200), async (name, text) => {
        fc.pre(!['stripe', 'shopify', 'acme'].includes(name));
        const status = await send({
          provider: name,
          path: `/webhooks/${name}`,
          body: text,
          headers: { 'stripe-signature': signStripe({ payload: text, secret: STRIPE_SECRET }) },
          key: '',
        });
        expect(status).toBe(404);
      }),
      { numRuns: 100 },
    );
  });

  it('afterwards: the process is up and healthy, and only correctly signed events were recorded', async () => {
    const pool = createPool({ connectionString: db.url, max: 1 });
    try {
      const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from webhook_events');
      const health = await getStatus(receiver.url, '/healthz');
      report('bad-input', {
        requests: tally.requests,
        statuses: tally.statuses,
        '2xx': tally.accepted + tally.duplicate,
        accepted: tally.accepted,
        rows: rows[0]?.n,
        healthz: health,
        alive: receiver.child.exitCode === null,
      });
      expect(receiver.child.exitCode).toBeNull();
      expect(health).toBe(200);
      expect(crashLines(receiver.output())).toEqual([]);
      // Every row is one that was answered `accepted`: no bad delivery left a trace.
      expect(rows[0]?.n).toBe(tally.accepted);
      expect(tally.accepted).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
  });
});
