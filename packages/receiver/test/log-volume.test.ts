import http from 'node:http';
import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, describe, expect, it } from 'vitest';
import {
  receiverEnv,
  spawnReceiver,
  stripeDelivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';

// A flood of refused requests against the receiver process: its log stays a few dozen lines, with one summary
// per kind carrying the true count of what was not written, and nothing a sender echoes is written whole.

const db = useTestDatabase();
const REFUSED = 3_000;
let receiver: SpawnedReceiver | undefined;
afterAll(async () => {
  await receiver?.stop();
});

interface LogLine {
  msg: string;
  code?: string;
  reason?: string;
  kind?: string;
  suppressed?: number;
}

/** POSTs `body` to `path` on a keep-alive agent; resolves to the status and the body. */
function send(
  agent: http.Agent,
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, url), {
      method: 'POST',
      agent,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    request.on('error', reject);
    request.end(body);
  });
}

describe('log volume under a flood of refused requests', () => {
  it('writes a bounded number of lines, a summary with the true count, and truncates echoed values', async () => {
    receiver = await spawnReceiver(receiverEnv(db.url, { LOG_LEVEL: 'info' }));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    const unsigned = stripeDelivery({ signature: null });
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < REFUSED) {
          next++;
          const { status } = await send(agent, receiver!.url, unsigned.path, unsigned.headers, unsigned.body);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 400: REFUSED });

    const longName = 'p'.repeat(15_000);
    const unknown = await send(agent, receiver.url, `/webhooks/${longName}`, unsigned.headers, unsigned.body);
    agent.destroy();
    expect(unknown.status).toBe(404);
    expect(unknown.body.length).toBeLessThan(500);
    expect(unknown.body).toContain('(15000 chars)');

    // The last summary is written on the way out.
    expect((await receiver.stop()).code).toBe(0);
    const raw = receiver.output().split('\n').filter(Boolean);
    const lines = raw.map((line) => JSON.parse(line) as LogLine);
    const written = lines.filter(
      (line) => line.msg === 'webhook refused' && line.code === 'missing_signature',
    );
    const suppressed = lines
      .filter(
        (line) => line.msg === 'similar log lines suppressed' && line.kind?.includes('missing_signature'),
      )
      .reduce((sum, line) => sum + (line.suppressed ?? 0), 0);
    expect(written.length).toBeGreaterThan(0);
    expect(written.length + suppressed).toBe(REFUSED);
    expect(lines.length).toBeLessThan(200);

    const unknownLine = lines.find((line) => line.code === 'unknown_provider');
    expect(unknownLine?.reason).toContain('(15000 chars)');
    expect(Math.max(...raw.map((line) => line.length))).toBeLessThan(2_000);
  }, 120_000);
});
