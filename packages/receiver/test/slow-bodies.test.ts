import http from 'node:http';
import { readFileSync } from 'node:fs';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import {
  post,
  receiverEnv,
  spawnReceiver,
  stripeDelivery,
  type HttpResult,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

// Slow request bodies against real sockets. Every body is buffered whole before its signature can be checked,
// so slow senders must not be able to hold unbounded memory, nor lock out the providers' real webhooks.

const db = useTestDatabase();
const MIB = 1024 * 1024;
// docs/deployment.md: "give the receiver container a memory limit of 256 MiB or more".
const MEMORY_LIMIT = 256 * MIB;
const FORGED = `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;

interface SlowBody {
  /** The answer, as soon as the receiver gives one (before the body is complete). */
  response: Promise<HttpResult>;
  /** Resolves once `send` bytes have been handed to the socket. */
  sent: Promise<void>;
  destroy(): void;
}

/**
 * A POST that declares `contentLength` bytes, sends `send` of them in 64 KiB writes (one reused buffer, so the
 * test holds no copies) and then stalls, holding the connection open.
 */
function slowBody(
  url: string,
  { contentLength, send, signature = FORGED }: { contentLength: number; send: number; signature?: string },
): SlowBody {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const request = http.request(new URL('/webhooks/stripe', url), {
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      'content-length': contentLength,
      'stripe-signature': signature,
    },
  });
  let answered = false;
  const response = new Promise<HttpResult>((resolve, reject) => {
    request.on('response', (incoming) => {
      answered = true;
      const chunks: Buffer[] = [];
      incoming.on('data', (data: Buffer) => chunks.push(data));
      incoming.on('end', () => {
        request.destroy();
        resolve({
          status: incoming.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          headers: incoming.headers,
        });
      });
      incoming.on('error', reject);
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
  });
  response.catch(() => {});
  const sent = new Promise<void>((resolve) => {
    let written = 0;
    const pump = () => {
      while (!answered && !request.destroyed && written < send) {
        const part = Math.min(chunk.length, send - written);
        written += part;
        if (!request.write(part === chunk.length ? chunk : chunk.subarray(0, part))) {
          request.once('drain', pump);
          return;
        }
      }
      resolve();
    };
    pump();
  });
  return { response, sent, destroy: () => request.destroy() };
}

/** Peak resident set size of a process so far, from the kernel. */
function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

/** The receiver's Node flags, as the app's `start` script (and the image) runs it: the heap cap among them. */
function startFlags(): string[] {
  const appManifest = new URL('../../../apps/receiver/package.json', import.meta.url);
  const manifest = JSON.parse(readFileSync(appManifest, 'utf8')) as {
    scripts: { start: string };
  };
  return manifest.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

describe('300 slow 1 MiB bodies under a forged signature, against the receiver process', () => {
  let receiver: SpawnedReceiver | undefined;
  const attack: SlowBody[] = [];
  afterAll(async () => {
    for (const body of attack) body.destroy();
    await receiver?.stop();
  });

  it("keep its memory under the container's limit while signed webhooks make room and get their 200", async () => {
    // With the limits set out of reach (budget 4 GiB, no connection cap, hour-long deadlines) the peak RSS
    // reaches about 420 MiB: the limits are what keeps it under.
    // The attack's bodies are never timed out while the test runs (the deadlines are ten minutes): a signed webhook
    // that gets its 200 got it by making room, not by waiting for the attack to give up, however busy the
    // machine is.
    receiver = await spawnReceiver(
      receiverEnv(db.url, {
        LOG_LEVEL: 'warn',
        WEBHOOK_BODY_TIMEOUT_MS: '600000',
        REQUEST_TIMEOUT_MS: '900000',
      }),
      startFlags(),
    );
    const pid = receiver.child.pid!;
    const url = receiver.url;
    const outcomes = new Map<number, number>();
    // Each attacker declares the per-request maximum, sends all of it but one byte and stalls; once answered
    // (refused, cut off or timed out) it comes back, three rounds each: a sustained attack of bounded size.
    const attacker = async () => {
      for (let round = 0; round < 3; round++) {
        const body = slowBody(url, { contentLength: MIB, send: MIB - 1 });
        attack.push(body);
        const result = await body.response.catch(() => ({ status: 0 }));
        outcomes.set(result.status, (outcomes.get(result.status) ?? 0) + 1);
      }
    };
    const attackers = Array.from({ length: 300 }, attacker);

    // Until the first wave has been sent in full (all but its last byte) or answered.
    await Promise.all(attack.slice(0, 300).map((body) => Promise.race([body.sent, body.response])));

    // Meanwhile, the provider's real webhooks get through: each one's body makes room by cutting off the oldest
    // stalled attacker. (On 2 busy cores the first took 3-5 s while the attack's 900 MiB went through the
    // loopback, the rest milliseconds; Shopify waits 5 s, Stripe longer, and both retry.)
    for (let i = 0; i < 10; i++) {
      const result = await post(url, stripeDelivery(), { timeoutMs: 90_000 });
      expect(result.status, result.body).toBe(200);
    }

    const peak = peakRss(pid);
    expect(peak, `peak RSS ${Math.round(peak / MIB)} MiB`).toBeLessThan(MEMORY_LIMIT);
    for (const body of attack) body.destroy();
    await Promise.allSettled(attackers);
    // The attackers were told to come back later (503), or cut off for taking too long (408).
    expect(
      [...outcomes.keys()].every((status) => [0, 408, 503].includes(status)),
      JSON.stringify([...outcomes]),
    ).toBe(true);
    expect(outcomes.get(503) ?? 0).toBeGreaterThan(0);
  }, 300_000);
});

describe('the body budget, the deadlines and the connection cap, over real sockets', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  const start = async (extra: Record<string, string>) =>
    (receiver = await startReceiver(
      parseConfig(
        receiverEnv(db.url, {
          PORT: '0',
          LOG_LEVEL: 'silent',
          WEBHOOK_MAX_BODY_BYTES: String(64 * 1024),
          WEBHOOK_BODY_BUDGET_BYTES: String(64 * 1024),
          WEBHOOK_MAX_BATCH_BODY_BYTES: String(64 * 1024),
          REQUEST_TIMEOUT_MS: '120000',
          ...extra,
        }),
      ),
    ));

  it('past the budget: 503 unavailable with Retry-After while another body holds it, 200 once it is released', async () => {
    const { url } = await start({ WEBHOOK_BODY_EVICT_AFTER_MS: '600000', WEBHOOK_BODY_TIMEOUT_MS: '60000' });
    const holder = slowBody(url, { contentLength: 64 * 1024, send: 32 * 1024 });
    await holder.sent;

    const delivery = stripeDelivery();
    const refused = await post(url, delivery);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'unavailable' } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    holder.destroy();
    // The sender retries: once the budget is back, the same delivery is recorded.
    const retried = await waitFor(
      async () => {
        const result = await post(url, delivery);
        return result.status === 200 && result;
      },
      { timeout: 10_000, message: 'the retried delivery to be accepted' },
    );
    expect(JSON.parse(retried.body)).toEqual({ status: 'accepted', id: delivery.key });
  });

  it('a single body over the per-request limit is 413, not 503, even with the budget free', async () => {
    const { url } = await start({});
    const tooLarge = await post(
      url,
      stripeDelivery({ body: JSON.stringify({ pad: 'x'.repeat(64 * 1024) }) }),
    );
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('a body still arriving while the budget is full is cut off (503) to make room for a new one', async () => {
    const { url } = await start({ WEBHOOK_BODY_EVICT_AFTER_MS: '0', WEBHOOK_BODY_TIMEOUT_MS: '60000' });
    const stalled = slowBody(url, { contentLength: 64 * 1024, send: 32 * 1024 });
    await stalled.sent;
    const delivery = stripeDelivery();
    expect((await post(url, delivery)).status).toBe(200);
    const cut = await stalled.response;
    expect(cut.status).toBe(503);
    expect(JSON.parse(cut.body)).toMatchObject({ error: { code: 'unavailable' } });
  });

  it('past MAX_CONNECTIONS a new connection is closed at once; the management listener still answers', async () => {
    const { url, managementUrl } = await start({ MAX_CONNECTIONS: '2', WEBHOOK_BODY_TIMEOUT_MS: '60000' });
    const held = [1, 2].map(() => slowBody(url, { contentLength: 1024, send: 512 }));
    await Promise.all(held.map((body) => body.sent));
    await waitFor(
      async () => (await post(url, stripeDelivery()).catch((error: Error) => error)) instanceof Error,
      {
        timeout: 10_000,
        message: 'a third connection to be refused',
      },
    );
    expect((await fetch(new URL('/readyz', managementUrl))).status).toBe(200);
    held[0]!.destroy();
    const accepted = await waitFor(
      async () => {
        const result = await post(url, stripeDelivery()).catch(() => undefined);
        return result?.status === 200 && result;
      },
      { timeout: 10_000, message: 'a connection to be accepted again' },
    );
    expect(accepted.status).toBe(200);
    held[1]!.destroy();
  });

  it('a body that stalls past WEBHOOK_BODY_TIMEOUT_MS gets 408 body_timeout and gives its bytes back', async () => {
    const { url } = await start({ WEBHOOK_BODY_TIMEOUT_MS: '1000' });
    const stalled = slowBody(url, { contentLength: 64 * 1024, send: 60 * 1024 });
    const timedOut = await stalled.response;
    expect(timedOut.status).toBe(408);
    expect(JSON.parse(timedOut.body)).toMatchObject({ error: { code: 'body_timeout' } });
    expect((await post(url, stripeDelivery())).status).toBe(200);
  });
});
