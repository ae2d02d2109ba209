import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, BREAK_GLASS_ACTOR, login, loginNonce, startStack, type Stack } from './support.ts';

const db = useTestDatabase();
let stack: Stack;
/** The console's clock: the session-expiry test moves it forward. */
let offsetMs = 0;

beforeAll(async () => {
  stack = await startStack(db.url, { clock: () => new Date(Date.now() + offsetMs), sessionTtlMs: 60_000 });
  await stack.send('evt_auth_1');
});
afterAll(async () => {
  await stack?.stop();
});

async function audit(action: string) {
  const { rows } = await stack.pool.query<{
    actor: string;
    target: string | null;
    remote_address: string | null;
  }>('select actor, target, remote_address from audit_log where action = $1 order by id', [action]);
  return rows;
}

async function jobCount(eventId: string): Promise<number> {
  const { rows } = await stack.pool.query<{ n: number }>(
    `select count(*)::int as n from pgboss.job where name = 'webhook-events' and data->>'eventId' = $1`,
    [eventId],
  );
  return rows[0]?.n ?? 0;
}

describe('sign-in', () => {
  it('refuses a wrong token with 401, sets no session, and audits the attempt as break-glass from its address', async () => {
    const { nonce, cookie } = await loginNonce(stack.url);
    const response = await fetch(`${stack.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie },
      body: new URLSearchParams({ _nonce: nonce, note: 'Mallory', token: `${ADMIN_TOKEN}x` }),
    });
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('That is not the admin token.');
    expect(response.headers.getSetCookie().some((c) => c.startsWith('wi_console_session='))).toBe(false);
    // The typed text is a note in the details, never the actor.
    expect(await audit('login_refused')).toEqual([
      { actor: BREAK_GLASS_ACTOR, target: null, remote_address: '127.0.0.1' },
    ]);
    await stack.pool.query('delete from auth_failures');
  });

  it('throttles an address after 5 refused sign-ins: 429 too_many_attempts, even with the right token', async () => {
    const attempt = async (token: string) => {
      const { nonce, cookie } = await loginNonce(stack.url);
      return fetch(`${stack.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie },
        body: new URLSearchParams({ _nonce: nonce, token }),
      });
    };
    expect((await attempt(ADMIN_TOKEN)).status).toBe(303);
    for (let i = 0; i < 5; i++) expect((await attempt(`guess-${i}-of-the-admin-token`)).status).toBe(401);
    const throttled = await attempt(ADMIN_TOKEN);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(await throttled.json()).toMatchObject({ error: { code: 'too_many_attempts' } });
    expect(throttled.headers.getSetCookie().some((c) => c.startsWith('wi_console_session='))).toBe(false);
    // Once the window (15 minutes from the first refusal) has ended, the address may sign in again.
    await stack.pool.query(`update auth_failures set resets_at = now() - interval '1 second'`);
    expect((await attempt(ADMIN_TOKEN)).status).toBe(303);
  });

  it('refuses a login form posted without its nonce (login CSRF)', async () => {
    const response = await fetch(`${stack.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { accept: 'text/html' },
      body: new URLSearchParams({ token: ADMIN_TOKEN }),
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('csrf_failed');
  });

  it('gives an HttpOnly, SameSite=Strict session cookie with an expiry, not Secure over plain HTTP', async () => {
    const { nonce, cookie } = await loginNonce(stack.url);
    const response = await fetch(`${stack.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie },
      body: new URLSearchParams({ _nonce: nonce, note: 'Ada', token: ADMIN_TOKEN, next: '/console/events' }),
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/events');
    const session = response.headers.getSetCookie().find((c) => c.startsWith('wi_console_session='));
    expect(session).toMatch(/; Max-Age=60; Path=\/console; HttpOnly; SameSite=Strict$/);
    expect((await audit('login')).map((r) => r.actor)).toContain(BREAK_GLASS_ACTOR);
  });

  it('marks the cookie Secure when the console is reached over HTTPS', async () => {
    const page = await stack.console.app.request('https://console.example/console/login');
    expect(page.headers.get('set-cookie')).toContain('; Secure');
  });

  it('never redirects a sign-in outside the console', async () => {
    const { nonce, cookie } = await loginNonce(stack.url);
    const response = await fetch(`${stack.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie },
      body: new URLSearchParams({
        _nonce: nonce,
        token: ADMIN_TOKEN,
        next: '//evil.example/console/',
      }),
    });
    expect(response.headers.get('location')).toBe('/console/');
  });
});

describe('sessions', () => {
  it('signs out: clears the cookie and audits it', async () => {
    const client = await login(stack.url, 'Linus');
    const response = await client.post('/logout', { _csrf: client.csrf });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/login?why=signed_out');
    expect(response.headers.getSetCookie().find((c) => c.startsWith('wi_console_session='))).toMatch(
      /Max-Age=0/,
    );
    expect((await audit('logout')).map((r) => r.actor)).toEqual([BREAK_GLASS_ACTOR]);
    // A copy of the signed-out cookie is refused: a page sends it to the sign-in, an action gets 401.
    const page = await client.get('/events');
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toContain('why=signed_out');
    const action = await client.post(
      '/event/replay',
      { _csrf: client.csrf, provider: 'stripe', id: 'evt_auth_1' },
      { headers: { accept: 'application/json' } },
    );
    expect(action.status).toBe(401);
    expect(await action.json()).toMatchObject({ error: { code: 'unauthorized' } });
    // Another operator's session is not affected.
    const other = await login(stack.url, 'Grace');
    expect((await other.get('/events')).status).toBe(200);
  });

  it('sends a request without a session to the sign-in page, and refuses a forged cookie', async () => {
    const page = await fetch(`${stack.url}/events?status=failed`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(
      '/console/login?next=%2Fconsole%2Fevents%3Fstatus%3Dfailed&why=missing',
    );

    const client = await login(stack.url);
    const [body] = client.cookie.split('=')[1]!.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as { expiresAt: number };
    const forged = Buffer.from(
      JSON.stringify({ ...claims, expiresAt: claims.expiresAt + 3_600_000 }),
    ).toString('base64url');
    const signature = client.cookie.split('.')[1];
    const refused = await fetch(`${stack.url}/events`, {
      redirect: 'manual',
      headers: { cookie: `wi_console_session=${forged}.${signature}` },
    });
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toContain('why=invalid');
  });

  it('refuses an expired session: a page redirects to sign-in, an action answers 401 session_expired', async () => {
    const client = await login(stack.url);
    offsetMs = 61_000;
    try {
      const page = await client.get('/events');
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toContain('why=expired');
      const action = await client.post('/event/replay', {
        _csrf: client.csrf,
        provider: 'stripe',
        id: 'evt_auth_1',
      });
      expect(action.status).toBe(401);
      expect(await action.text()).toContain('session_expired');
    } finally {
      offsetMs = 0;
    }
    expect(await jobCount('evt_auth_1')).toBe(1);
  });
});

describe('CSRF and cross-origin requests', () => {
  it('refuses a state-changing request without the CSRF token, and replays nothing', async () => {
    const client = await login(stack.url);
    const response = await client.post('/event/replay', { provider: 'stripe', id: 'evt_auth_1' });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('csrf_failed');
    const wrong = await client.post('/event/replay', {
      _csrf: 'x'.repeat(43),
      provider: 'stripe',
      id: 'evt_auth_1',
    });
    expect(wrong.status).toBe(403);
    // Another session's token is not this session's.
    const other = await login(stack.url, 'Bob');
    const swapped = await client.post('/event/replay', {
      _csrf: other.csrf,
      provider: 'stripe',
      id: 'evt_auth_1',
    });
    expect(swapped.status).toBe(403);
    expect(await jobCount('evt_auth_1')).toBe(1);
    expect(await audit('replay')).toEqual([]);
  });

  it('refuses a request from another origin even with a valid token', async () => {
    const client = await login(stack.url);
    const response = await client.post(
      '/event/replay',
      { _csrf: client.csrf, provider: 'stripe', id: 'evt_auth_1' },
      { headers: { origin: 'https://evil.example' } },
    );
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('cross_origin');
    expect(await jobCount('evt_auth_1')).toBe(1);
  });

  it('accepts the same request with the token, from the console, and audits it', async () => {
    const client = await login(stack.url, 'Grace');
    const response = await client.post('/event/replay', {
      _csrf: client.csrf,
      provider: 'stripe',
      id: 'evt_auth_1',
    });
    expect(response.status).toBe(303);
    await waitFor(async () => (await jobCount('evt_auth_1')) === 2);
    expect(await audit('replay')).toEqual([
      { actor: BREAK_GLASS_ACTOR, target: 'stripe evt_auth_1', remote_address: '127.0.0.1' },
    ]);
  });

  it('sends no CORS header, to a preflight or to a cross-origin read', async () => {
    const client = await login(stack.url);
    const preflight = await fetch(`${stack.url}/event/replay`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    const read = await client.get('/events', { headers: { origin: 'https://evil.example' } });
    for (const response of [preflight, read]) {
      expect([...response.headers.keys()].filter((k) => k.startsWith('access-control-'))).toEqual([]);
    }
    expect(read.headers.get('content-security-policy')).toContain("script-src 'self'");
  });
});
