import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { parseTrustedProxies } from '@webhook-inbox/operator/access/forwarded';
import { useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createConsole } from '../src/index.ts';
import { ADMIN_TOKEN, login, loginNonce, startStack, type Client, type Stack } from './support.ts';

/**
 * The audit's attacks on the console, over real HTTP: concurrent token guessing, a TLS-terminating proxy, lookups of
 * inherited property names, malformed parameters, and a throttle whose database is down.
 */
const db = useTestDatabase();
/** Behind a trusted proxy on this machine: `X-Forwarded-For` and `X-Forwarded-Proto` are believed. */
let proxied: Stack;
/** Reached directly: the same headers are ignored. */
let direct: Stack;
let client: Client;

beforeAll(async () => {
  proxied = await startStack(db.url, {
    trustedProxies: parseTrustedProxies('127.0.0.1'),
    // Enough connections for the 200 attempts to overlap: a count read apart from its refusal lets more than 5 in.
    poolSize: 40,
    loginThrottle: { maxFailures: 5, accountMaxFailures: 12 },
  });
  direct = await startStack(db.url);
  client = await login(direct.url);
}, 60_000);
afterAll(async () => {
  await proxied?.stop();
  await direct?.stop();
});
beforeEach(async () => {
  await proxied.pool.query('delete from auth_failures');
});

/** A break-glass sign-in attempt, as if from `address` behind the proxy. */
async function attempt(stack: Stack, token: string, headers: Record<string, string> = {}): Promise<Response> {
  const { nonce, cookie } = await loginNonce(stack.url);
  return fetch(`${stack.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, ...headers },
    body: new URLSearchParams({ _nonce: nonce, token, note: 'guess' }),
  });
}

async function refusedSignIns(): Promise<number> {
  const { rows } = await proxied.pool.query<{ n: number }>(
    `select count(*)::int as n from audit_log where action = 'login_refused'`,
  );
  return rows[0]?.n ?? 0;
}

describe('sign-in throttle', () => {
  it('lets 200 concurrent wrong tokens from one address try at most 5 times; the rest get 429', async () => {
    const before = await refusedSignIns();
    const { nonce, cookie } = await loginNonce(proxied.url);
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`${proxied.url}/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, 'x-forwarded-for': '203.0.113.7' },
          body: new URLSearchParams({ _nonce: nonce, token: `guess-number-${i}-of-the-token` }),
        }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(195);
    // Only the tried ones are on record: a burst cannot flood the audit log.
    expect((await refusedSignIns()) - before).toBe(5);
    // The right token from that address is refused too until the window ends; another address is not affected.
    expect((await attempt(proxied, ADMIN_TOKEN, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429);
    expect((await attempt(proxied, ADMIN_TOKEN, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(303);
  });

  it('throttles the account across addresses: a guesser spread over 20 addresses gets 12 tries', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 20; i++) {
      statuses.push(
        (await attempt(proxied, `guess-${i}-of-the-token`, { 'x-forwarded-for': `10.1.0.${i}` })).status,
      );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(12);
    expect(statuses.slice(12).every((s) => s === 429)).toBe(true);
  });

  it('answers 503 unavailable, never 500 and never a sign-in, when the throttle database is down', async () => {
    const deadPool = new pg.Pool({
      connectionString: 'postgres://inbox@127.0.0.1:1/none',
      connectionTimeoutMillis: 2000,
    });
    deadPool.on('error', () => {});
    const console = createConsole({
      pool: deadPool,
      boss: direct.boss,
      adminToken: ADMIN_TOKEN,
      logger: pino({ level: 'silent' }),
    });
    const server = await new Promise<Server>((resolve) => {
      const s: ServerType = serve({ fetch: console.app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
        resolve(s as Server),
      );
    });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`;
      for (const token of ['wrong-token-wrong-token', ADMIN_TOKEN]) {
        const response = await attempt({ url } as Stack, token);
        expect(response.status).toBe(503);
        expect(await response.json()).toMatchObject({ error: { code: 'database_unavailable' } });
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deadPool.end();
    }
  });
});

describe('behind a TLS-terminating proxy', () => {
  const https = { 'x-forwarded-proto': 'https' };

  it('takes the scheme from a trusted proxy: Secure cookies, and its own https origin is accepted', async () => {
    const page = await fetch(`${proxied.url}/login`, { headers: https });
    expect(page.headers.get('set-cookie')).toContain('; Secure');
    const origin = `https://${new URL(proxied.url).host}`;
    const response = await attempt(proxied, ADMIN_TOKEN, { ...https, origin });
    expect(response.status).toBe(303);
    const session = response.headers.getSetCookie().find((c) => c.startsWith('wi_console_session='));
    expect(session).toContain('; Secure');
  });

  it('ignores X-Forwarded-Proto from a peer that is not a trusted proxy', async () => {
    const page = await fetch(`${direct.url}/login`, { headers: https });
    expect(page.headers.get('set-cookie')).not.toContain('Secure');
    const origin = `https://${new URL(direct.url).host}`;
    const response = await attempt(direct, ADMIN_TOKEN, { ...https, origin });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'cross_origin' } });
  });
});

describe('inherited names and malformed parameters', () => {
  it('answers 404 for an asset named after an Object property', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const response = await fetch(`${direct.url}/assets/${name}`);
      expect(response.status, name).toBe(404);
    }
  });

  it('answers 400 invalid_input for each bad parameter, never a 500', async () => {
    const cursor = (parts: string[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    const paths = [
      '/?window=toString',
      '/overview/figures?window=constructor',
      '/alerts?window=toString',
      '/alerts?window=__proto__',
      '/events?type=checkout%00session',
      '/events?provider=str%00ipe',
      '/events?eventId=evt%00',
      `/events?cursor=${cursor(['2026-01-01T00:00:00.000000Z', 'stripe', 'evt\u0000'])}`,
      `/events?cursor=${cursor(['2026-99-99T00:00:00.000000Z', 'stripe', 'evt_1'])}`,
      '/bulk?status=failed&type=a%00b',
      '/operations/1e30',
      '/operations/99999999999999999999',
    ];
    for (const path of paths) {
      const response = await client.get(path, { headers: { accept: 'application/json' } });
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expect(await response.json()).toMatchObject({ error: { code: 'invalid_input' } });
    }
  });
});
