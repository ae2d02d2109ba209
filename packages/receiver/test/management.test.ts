import { getWithHost as withHost, useTestDatabase } from '@webhook-inbox/testing';
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
import { memoryLogger, sql } from './helpers.ts';
import { post, receiverEnv, stripeDelivery } from '@webhook-inbox/scenarios/receiver';

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
    expect(await status(receiver.url, '/console/login')).toBe(200);
    expect(await status(receiver.managementUrl, '/console/login')).toBe(404);
  });
});

/** Signs in to the console at `base` (its sign-in nonce, then the admin token); returns the session cookie. */
async function consoleSession(base: string, token: string): Promise<{ status: number; cookie?: string }> {
  const page = await fetch(`${base}/console/login`);
  const nonceCookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const nonce = /name="_nonce" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const response = await fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: nonceCookie },
    body: new URLSearchParams({ _nonce: nonce, note: 'Ada', token, next: '' }),
  });
  await response.arrayBuffer();
  const cookie = response.headers
    .getSetCookie()
    .find((c) => c.startsWith('wi_console_session='))
    ?.split(';')[0];
  return { status: response.status, cookie };
}

describe('the operator console', () => {
  it('is served on the management listener, signed in to with the admin token, and not on the public port', async () => {
    receiver = await startReceiver(parseConfig(receiverEnv(db.url, { PORT: '0', ADMIN_TOKEN: TOKEN })));
    const { url, managementUrl } = receiver;
    expect(await status(url, '/console/login')).toBe(404);
    expect(await status(url, '/console/')).toBe(404);
    expect(await status(managementUrl, '/console/login')).toBe(200);

    expect((await consoleSession(managementUrl, 'not-the-admin-token-at-all')).status).toBe(401);
    const { status: signIn, cookie } = await consoleSession(managementUrl, TOKEN);
    expect(signIn).toBe(303);
    expect(cookie).toBeDefined();

    // A webhook taken on the public port is listed, and replayed from the console through the receiver's
    // own pg-boss: the replay sends a second job for the event.
    const delivery = stripeDelivery();
    expect((await post(url, delivery)).status).toBe(200);
    const headers = { cookie: cookie!, accept: 'text/html' };
    // Unknown console paths get the console's own page, not the management listener's JSON.
    const unknown = await fetch(`${managementUrl}/console/nope`, { headers });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('<code>not_found</code>');
    const events = await fetch(`${managementUrl}/console/events?provider=stripe`, { headers });
    expect(events.status).toBe(200);
    const list = await events.text();
    expect(list).toContain(delivery.key);
    const event = await fetch(`${managementUrl}/console/event?provider=stripe&id=${delivery.key}`, {
      headers,
    });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await event.text())?.[1];
    expect(csrf).toBeDefined();
    const replay = await fetch(`${managementUrl}/console/event/replay`, {
      method: 'POST',
      redirect: 'manual',
      headers,
      body: new URLSearchParams({ _csrf: csrf!, provider: 'stripe', id: delivery.key }),
    });
    await replay.arrayBuffer();
    expect(replay.status).toBe(303);
    const jobs = await sql(
      db.url,
      `select count(*)::int as n from pgboss.job where name = 'webhook-events' and data->>'eventId' = $1`,
      [delivery.key],
    );
    expect(jobs.rows[0]).toEqual({ n: 2 });
    const audit = await sql(
      db.url,
      `select actor, action, target, remote_address from audit_log where action in ('login', 'replay') order by id`,
    );
    expect(audit.rows).toEqual([
      { actor: 'break-glass@127.0.0.1', action: 'login', target: null, remote_address: '127.0.0.1' },
      {
        actor: 'break-glass@127.0.0.1',
        action: 'replay',
        target: `stripe ${delivery.key}`,
        remote_address: '127.0.0.1',
      },
    ]);
  });

  it('does not exist without an admin token', async () => {
    receiver = await startReceiver(parseConfig(receiverEnv(db.url, { PORT: '0' })));
    expect(await status(receiver.managementUrl, '/console/login')).toBe(404);
    expect(await status(receiver.url, '/console/login')).toBe(404);
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

describe('the Host allow-list (MANAGEMENT_ALLOWED_HOSTS)', () => {
  it('refuses a DNS-rebinding page: /metrics, the admin API and the console answer only the loopback names', async () => {
    receiver = await startReceiver(parseConfig(receiverEnv(db.url, { PORT: '0', ADMIN_TOKEN: TOKEN })));
    const base = receiver.managementUrl;
    const port = new URL(base).port;
    const rebound = `attacker.example:${port}`;
    for (const path of ['/metrics', '/admin/events', '/console/login', '/console/']) {
      expect(await withHost(base, path, rebound, ADMIN), path).toEqual({
        status: 421,
        code: 'host_not_allowed',
      });
    }
    // Guesses sent that way are refused before the token is looked at: none is counted against the operator.
    expect(
      await withHost(base, '/admin/events', rebound, { authorization: 'Bearer wrong-token-0123456789' }),
    ).toEqual({ status: 421, code: 'host_not_allowed' });
    expect(
      (await sql(db.url, `select count(*)::int as n from auth_failures where scope = 'admin_api'`)).rows,
    ).toEqual([{ n: 0 }]);
    // The health probes answer whatever the Host (an orchestrator sends the pod's address).
    expect((await withHost(base, '/healthz', rebound)).status).toBe(200);
    expect((await withHost(base, '/readyz', rebound)).status).toBe(200);

    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      expect((await withHost(base, '/metrics', host)).status, host).toBe(200);
      expect((await withHost(base, '/admin/events', host, ADMIN)).status, host).toBe(200);
    }
  });

  it('answers the names it lists instead', async () => {
    receiver = await startReceiver(
      parseConfig(
        receiverEnv(db.url, { PORT: '0', ADMIN_TOKEN: TOKEN, MANAGEMENT_ALLOWED_HOSTS: 'metrics.internal' }),
      ),
    );
    const base = receiver.managementUrl;
    expect((await withHost(base, '/metrics', 'metrics.internal:9102')).status).toBe(200);
    expect(await withHost(base, '/metrics', `localhost:${new URL(base).port}`)).toEqual({
      status: 421,
      code: 'host_not_allowed',
    });
  });
});
