import { useTestDatabase } from '@webhook-inbox/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createManagementApp,
  createMetrics,
  createRequestPool,
  createSender,
  parseConfig,
  startReceiver,
  type Receiver,
} from '../src/index.ts';
import { memoryLogger, receiverEnv } from './helpers.ts';

// Health, readiness, metrics and the admin API live on the management listener (127.0.0.1 by default), off
// the port providers (and anyone else) reach; only a database-free /healthz stays public.

const db = useTestDatabase();
const TOKEN = 'management-test-admin-token';
const ADMIN = { authorization: `Bearer ${TOKEN}` };

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function status(
  base: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<number> {
  const response = await fetch(new URL(path, base), { method, headers, signal: AbortSignal.timeout(5_000) });
  await response.arrayBuffer();
  return response.status;
}

describe('the two listeners', () => {
  it('management endpoints and the admin API answer on the management port and 404 on the public one', async () => {
    receiver = await startReceiver(parseConfig(receiverEnv(db.url, { PORT: '0', ADMIN_TOKEN: TOKEN })));
    const { url, managementUrl } = receiver;
    expect(new URL(managementUrl).hostname).toBe('127.0.0.1');
    expect(new URL(managementUrl).port).not.toBe(new URL(url).port);

    expect(await status(url, '/healthz')).toBe(200);
    for (const path of ['/readyz', '/metrics']) expect(await status(url, path), `public ${path}`).toBe(404);
    expect(await status(url, '/admin/events', ADMIN)).toBe(404);

    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect(await status(managementUrl, path), `management ${path}`).toBe(200);
    }
    expect(await status(managementUrl, '/admin/events', ADMIN)).toBe(200);
    expect(await status(managementUrl, '/admin/events')).toBe(401);
    // Webhooks are only on the public listener.
    expect(await status(managementUrl, '/webhooks/stripe', {}, 'POST')).toBe(404);
    expect(await status(url, '/webhooks/stripe', {}, 'POST')).toBe(400);
  });

  it('ADMIN_LISTENER=public serves the admin API on the public port instead', async () => {
    receiver = await startReceiver(
      parseConfig(receiverEnv(db.url, { PORT: '0', ADMIN_TOKEN: TOKEN, ADMIN_LISTENER: 'public' })),
    );
    expect(await status(receiver.url, '/admin/events', ADMIN)).toBe(200);
    expect(await status(receiver.managementUrl, '/admin/events', ADMIN)).toBe(404);
    expect(await status(receiver.url, '/readyz')).toBe(404);
  });
});

describe('/readyz under a flood', () => {
  it('asks the database at most about once a second, however many probes arrive', async () => {
    const { logger } = memoryLogger();
    const config = parseConfig(receiverEnv(db.url, { DATABASE_POOL_SIZE: '4' }));
    const pool = createRequestPool(config, logger);
    const boss = createSender(db.url, logger);
    // A spy that calls through: the real `select 1` runs, and is counted.
    const query = vi.spyOn(pool, 'query');
    const management = createManagementApp({
      pool,
      boss,
      logger,
      metrics: createMetrics(pool, { defaultMetrics: false }),
    });
    try {
      const started = performance.now();
      let probes = 0;
      while (performance.now() - started < 2_500) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () => Promise.resolve(management.request('/readyz'))),
        );
        expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
        probes += answers.length;
      }
      const seconds = (performance.now() - started) / 1000;
      const selects = query.mock.calls.filter(([text]) => text === 'select 1').length;
      expect(probes).toBeGreaterThan(200);
      expect(selects).toBeGreaterThan(0);
      expect(selects).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    } finally {
      query.mockRestore();
      await pool.end();
    }
  });
});
