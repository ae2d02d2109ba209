import { randomBytes } from 'node:crypto';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recorded, standardDelivery } from './helpers.ts';
import {
  post,
  receiverEnv,
  shopifyDelivery,
  spawnReceiver,
  stripeDelivery,
  type Delivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

// Authentic bodies that can never be stored, over real HTTP against a receiver process: each is a 400
// invalid_payload (the provider stops retrying) with nothing recorded, never a 503 that invites retries for days.

const db = useTestDatabase();
let receiver: SpawnedReceiver;

beforeAll(async () => {
  receiver = await spawnReceiver(receiverEnv(db.url, { LOG_LEVEL: 'warn' }));
});
afterAll(async () => {
  await receiver?.stop();
});

const stripeEvent = (fields: Record<string, unknown>) =>
  JSON.stringify({ object: 'event', type: 'checkout.session.completed', data: { object: {} }, ...fields });

/** Random hex, which no index compresses: `n` characters. */
const hex = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);

async function expectInvalidPayload(delivery: Delivery): Promise<void> {
  const before = await recorded(db.url);
  const response = await post(receiver.url, delivery);
  expect(response.status, response.body).toBe(400);
  expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'invalid_payload' } });
  expect(response.headers['retry-after']).toBeUndefined();
  expect(await recorded(db.url)).toEqual(before);
}

describe('payloads PostgreSQL can never store: 400 invalid_payload, no row, no job', () => {
  it('a body nested 100,000 levels deep (stack depth limit exceeded)', async () => {
    const depth = 100_000;
    const id = `evt_deep_${hex(8)}`;
    const body = `{"id":"${id}","object":"event","type":"checkout.session.completed","data":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    await expectInvalidPayload(stripeDelivery({ id, body }));
  });

  it('a 900 KB event id', async () => {
    const id = `evt_${hex(900_000)}`;
    await expectInvalidPayload(stripeDelivery({ id, body: stripeEvent({ id }) }));
  });

  it('an event id, type or delivery header past 255 characters', async () => {
    const id = `evt_${hex(300)}`;
    await expectInvalidPayload(stripeDelivery({ id, body: stripeEvent({ id }) }));
    const type = `invoice.${hex(300)}`;
    await expectInvalidPayload(standardDelivery({ body: JSON.stringify({ type, data: {} }) }));
    await expectInvalidPayload(shopifyDelivery({ eventId: hex(3_000) }));
  });

  it('a \\u0000 escape, which jsonb refuses', async () => {
    const id = `evt_nul_${hex(8)}`;
    await expectInvalidPayload(stripeDelivery({ id, body: stripeEvent({ id, data: { note: 'a\u0000b' } }) }));
  });

  it('a NUL in the event type, which a text column refuses', async () => {
    const id = `evt_nultype_${hex(8)}`;
    await expectInvalidPayload(stripeDelivery({ id, body: stripeEvent({ id, type: 'invoice.\u0000paid' }) }));
  });

  it('a normal event next to them is still accepted', async () => {
    const delivery = stripeDelivery();
    const response = await post(receiver.url, delivery);
    expect(response.status, response.body).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'accepted', id: delivery.key });
    expect(await recorded(db.url, { provider: 'stripe', eventId: delivery.key })).toEqual({
      events: 1,
      jobs: 1,
    });
  });
});
