import http from 'node:http';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { recorded } from './helpers.ts';
import {
  getStatus,
  receiverEnv,
  spawnReceiver,
  stripeDelivery,
  type Delivery,
  type HttpResult,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

// SIGTERM with a request in flight: the request completes, then the process exits 0.

const db = useTestDatabase();
const spawned: SpawnedReceiver[] = [];
afterEach(async () => {
  for (const receiver of spawned.splice(0)) {
    receiver.child.kill('SIGKILL');
    await receiver.exited;
  }
});

/** Sends the headers and the first half of the body, and returns a way to send the rest. */
function halfSent(url: string, delivery: Delivery): { finish(): void; response: Promise<HttpResult> } {
  const body = Buffer.from(delivery.body);
  const request = http.request(new URL(delivery.path, url), {
    method: 'POST',
    agent: false,
    headers: { ...delivery.headers, 'content-length': body.length },
  });
  const response = new Promise<HttpResult>((resolve, reject) => {
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          headers: res.headers,
        }),
      );
    });
    request.on('error', reject);
  });
  request.write(body.subarray(0, body.length >> 1));
  return { finish: () => request.end(body.subarray(body.length >> 1)), response };
}

async function inFlight(url: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  return Number(/^http_requests_in_flight (\d+)/m.exec(text)?.[1] ?? 0);
}

describe('graceful shutdown', () => {
  it('SIGTERM with a request in flight: it completes 200, new connections are refused, exit 0', async () => {
    const receiver = await spawnReceiver(receiverEnv(db.url));
    spawned.push(receiver);
    const delivery = stripeDelivery();
    const pending = halfSent(receiver.url, delivery);
    // Scraped on the management listener: the half-sent request is the only one on the public one.
    await waitFor(async () => (await inFlight(receiver.managementUrl)) >= 1, {
      message: 'the request to be in flight',
    });

    receiver.child.kill('SIGTERM');
    await waitFor(() => receiver.output().includes('receiver stopping'), { message: 'shutdown to begin' });
    await expect(getStatus(receiver.url, '/healthz')).rejects.toThrow();
    expect(receiver.child.exitCode).toBeNull();

    pending.finish();
    const response = await pending.response;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'accepted', id: delivery.key });
    expect(await receiver.exited).toEqual({ code: 0, signal: null });
    expect(receiver.output()).toContain('receiver stopped');
    expect(await recorded(db.url, { provider: 'stripe', eventId: delivery.key })).toEqual({
      events: 1,
      jobs: 1,
    });
  });

  it('a request that never completes is cut off after SHUTDOWN_TIMEOUT_MS; still exit 0', async () => {
    const receiver = await spawnReceiver(receiverEnv(db.url, { SHUTDOWN_TIMEOUT_MS: '500' }));
    spawned.push(receiver);
    const pending = halfSent(receiver.url, stripeDelivery());
    pending.response.catch(() => {});
    await waitFor(async () => (await inFlight(receiver.managementUrl)) >= 1);
    // The request would never complete: the process exiting at all is the cut-off.
    receiver.child.kill('SIGTERM');
    expect(await receiver.exited).toEqual({ code: 0, signal: null });
    await expect(pending.response).rejects.toThrow();
  });

  it('a second signal exits at once', async () => {
    const receiver = await spawnReceiver(receiverEnv(db.url, { SHUTDOWN_TIMEOUT_MS: '60000' }));
    spawned.push(receiver);
    const pending = halfSent(receiver.url, stripeDelivery());
    pending.response.catch(() => {});
    await waitFor(async () => (await inFlight(receiver.managementUrl)) >= 1);
    receiver.child.kill('SIGTERM');
    await waitFor(() => receiver.output().includes('receiver stopping'));
    receiver.child.kill('SIGINT');
    const exit = await receiver.exited;
    expect(exit.code).toBe(1);
    expect(receiver.output()).toContain('second signal');
  });
});
