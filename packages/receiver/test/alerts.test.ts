import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/env.ts';
import { startReceiver, type Receiver } from '../src/receiver.ts';
import { memoryLogger } from './helpers.ts';
import { receiverEnv, stripeDelivery } from '@webhook-inbox/scenarios/receiver';

// A jump in refused signatures (a rotated secret not deployed) reaches ALERT_WEBHOOK_URL, once per window.

const db = useTestDatabase();
let alerts: Server;
const received: { text?: string }[] = [];
let receiver: Receiver;

beforeAll(async () => {
  alerts = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(JSON.parse(body) as { text?: string });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => alerts.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(alerts.address() as AddressInfo).port}/hook`;
  receiver = await startReceiver(
    parseConfig(
      receiverEnv(db.url, { PORT: '0', ALERT_WEBHOOK_URL: url, ALERT_SIGNATURE_FAILURES_PER_MINUTE: '5' }),
    ),
    { logger: memoryLogger('silent').logger },
  );
});
afterAll(async () => {
  await receiver?.close();
  await new Promise<void>((resolve) => alerts.close(() => resolve()));
});

describe('signature-failure alert', () => {
  it('alerts when refused signatures exceed the threshold, without slowing the refusals', async () => {
    for (let i = 0; i < 12; i++) {
      const delivery = stripeDelivery({ secret: 'whsec_not_the_deployed_one' });
      const response = await fetch(`${receiver.url}${delivery.path}`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      expect(response.status).toBe(400);
    }
    await waitFor(() => received.length > 0, { timeout: 10_000, message: 'an alert arrives' });
    expect(received[0]?.text).toMatch(/signature/i);
    expect(received[0]?.text).toContain('stripe');
    expect(JSON.stringify(received)).not.toContain('whsec_');
  });
});
