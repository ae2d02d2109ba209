import { existsSync } from 'node:fs';
import { requireTool, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleOidc, startIdentityProvider, type IdentityProvider } from './identity-provider.ts';
import { sessionClient, startStack, type Client, type Stack } from './support.ts';

/**
 * Single sign-on end to end: Chromium signs operators in through a real OpenID Connect provider (oidc-provider, its
 * own login and consent pages) on another site than the console; each role can do what it may and is refused (403)
 * the rest, whether it clicks or posts; the audit log's actor is the provider's verified email.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const EVENT = 'evt_sso_1';

const db = useTestDatabase();
let idp: IdentityProvider;
let stack: Stack;
let browser: Browser;

const eventPath = `/event?provider=stripe&id=${EVENT}`;

function fail(message: string): never {
  throw new Error(message);
}

async function jobCount(): Promise<number> {
  const { rows } = await stack.pool.query<{ n: number }>(
    `select count(*)::int as n from pgboss.job where data->>'eventId' = $1`,
    [EVENT],
  );
  return rows[0]?.n ?? 0;
}

async function auditRows(action: string) {
  const { rows } = await stack.pool.query<{ actor: string; role: string; method: string }>(
    `select actor, role, auth_method as method from audit_log where action = $1 order by id`,
    [action],
  );
  return rows;
}

/**
 * Signs `login` in through the provider's pages until the browser is back on the console at a page `landed` accepts
 * (default: past the callback); a fetch client shares its session, when there is one.
 */
async function signIn(
  login: string,
  landed = (path: string) => path !== '/console/login/callback',
): Promise<{ page: Page; client: Client | undefined }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.url}${eventPath}`);
  expect(new URL(page.url()).pathname).toBe('/console/login');
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.origin === new URL(stack.url).origin && landed(url.pathname));
  const session = (await context.cookies()).find((c) => c.name === 'wi_console_session');
  const client = session ? await sessionClient(stack.url, `wi_console_session=${session.value}`) : undefined;
  return { page, client };
}

describe.runIf(
  requireTool(
    'chromium',
    existsSync(CHROMIUM),
    `none at ${CHROMIUM}: apt-get install chromium, or CHROMIUM_PATH=<path>`,
  ),
)('single sign-on through an OpenID Connect provider, in Chromium', () => {
  beforeAll(async () => {
    idp = await startIdentityProvider();
    stack = await startStack(db.url, { oidc: consoleOidc(idp, { name: 'Test IdP' }) });
    idp.register(`${stack.url}/login/callback`);
    stack.downstream.up = true;
    await stack.send(EVENT, `{"id":"${EVENT}","data":{"object":{"customer":"cus_secret_42"}}}`);
    await stack.startWorker();
    await waitFor(async () => {
      const { rows } = await stack.pool.query<{ n: number }>(
        `select count(*)::int as n from effect_runs where event_id = $1 and status = 'completed'`,
        [EVENT],
      );
      return rows[0]?.n === 2;
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await idp?.stop();
  });

  it('a viewer reads the event with its payload masked, has no replay button, and is refused a replay (403)', async () => {
    const { page, client = fail('no session') } = await signIn('vic');
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe(`/console${eventPath}`);
    await page.getByRole('heading', { name: `stripe · ${EVENT}` }).waitFor();
    await page.getByText('Masked: the viewer role does not see payloads.').waitFor();
    expect(await page.content()).not.toContain('cus_secret_42');
    expect(await page.getByRole('button', { name: 'Replay unfinished effects' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /^Force / }).count()).toBe(0);

    const jobs = await jobCount();
    const replay = await client.post('/event/replay', { _csrf: client.csrf, provider: 'stripe', id: EVENT });
    expect(replay.status).toBe(403);
    expect(await replay.text()).toContain('forbidden');
    // Nor can it read a payload one filter guess at a time.
    expect((await client.get('/events?path=data.object.customer&value=cus_secret_42')).status).toBe(403);
    // Bulk replay: the dry run reads, its start button is not shown, and its POST is refused.
    await page.goto(`${stack.url}/bulk?status=processed`);
    await page.getByRole('heading', { name: 'Bulk replay: dry run' }).waitFor();
    expect(await page.getByRole('button', { name: /^Replay all/ }).count()).toBe(0);
    const bulk = await client.post('/bulk', {
      _csrf: client.csrf,
      status: 'processed',
      upTo: new Date().toISOString(),
    });
    expect(bulk.status).toBe(403);
    // Replay selected: no checkboxes in the lists, and their POST is refused.
    for (const list of ['/events', '/dead']) {
      await page.goto(`${stack.url}${list}`);
      expect(await page.getByRole('button', { name: 'Replay selected' }).count()).toBe(0);
      expect(await page.getByRole('checkbox').count()).toBe(0);
      const selected = await client.post(list, {
        _csrf: client.csrf,
        event: JSON.stringify(['stripe', EVENT]),
      });
      expect(selected.status).toBe(403);
    }
    expect(await jobCount()).toBe(jobs);
    expect(await auditRows('replay')).toEqual([]);
    expect(await auditRows('bulk_replay_started')).toEqual([]);
    expect(await auditRows('login')).toEqual([{ actor: 'vic@example.com', role: 'viewer', method: 'oidc' }]);
  });

  it('an operator replays from the button but cannot force a completed effect (403)', async () => {
    const { page, client = fail('no session') } = await signIn('olga');
    await page.getByText('cus_secret_42').first().waitFor();
    expect(await page.getByRole('link', { name: /^Force / }).count()).toBe(0);
    // A processed event offers no replay; the operator's replay is allowed (303), and changes nothing.
    await page.getByText('Processed: every effect completed, nothing to replay.').waitFor();
    const replay = await client.post('/event/replay', { _csrf: client.csrf, provider: 'stripe', id: EVENT });
    expect(replay.status).toBe(303);

    const jobs = await jobCount();
    const force = await client.post('/event/replay', {
      _csrf: client.csrf,
      provider: 'stripe',
      id: EVENT,
      force: 'notifyCrm',
    });
    expect(force.status).toBe(403);
    expect((await client.get(`/event/force?provider=stripe&id=${EVENT}&effect=notifyCrm`)).status).toBe(403);
    expect(await jobCount()).toBe(jobs);
    expect(await auditRows('replay_forced')).toEqual([]);
    // The replay that found nothing to run is on record all the same; the refused force is not.
    expect(await auditRows('replay')).toEqual([
      { actor: 'olga@example.com', role: 'operator', method: 'oidc' },
    ]);
    expect(await auditRows('login')).toContainEqual({
      actor: 'olga@example.com',
      role: 'operator',
      method: 'oidc',
    });
  });

  it('an admin forces a completed effect through its confirmation, audited as the verified email', async () => {
    const { page } = await signIn('ada');
    const calls = stack.downstream.calls;
    await page.getByRole('link', { name: 'Force notifyCrm to run again…' }).click();
    await page.getByRole('button', { name: 'Yes, run notifyCrm again' }).click();
    await page.getByText(/Replay queued: notifyCrm will run/).waitFor();
    await waitFor(() => stack.downstream.calls > calls);
    expect(await auditRows('replay_forced')).toEqual([
      { actor: 'ada@example.com', role: 'admin', method: 'oidc' },
    ]);
  });

  it('refuses (403 no_role) a user the provider knows but no group of OIDC_ROLES maps, and audits the refusal', async () => {
    const { page, client } = await signIn('nobody', (path) => path === '/console/login/callback');
    expect(client).toBeUndefined();
    await page.getByText(/none of their groups \(contractors\) has a role/).waitFor();
    expect(await page.content()).toContain('no_role');
    const { rows } = await stack.pool.query<{ actor: string; reason: string }>(
      `select actor, details->>'reason' as reason from audit_log where action = 'login_refused'`,
    );
    expect(rows).toEqual([{ actor: 'nobody@example.com', reason: 'no_role' }]);
  });

  it('refuses a callback this browser did not start, or whose state was changed (400 oidc_failed)', async () => {
    const foreign = await fetch(`${stack.url}/login/callback?code=stolen&state=any`, {
      headers: { accept: 'application/json' },
    });
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ error: { code: 'oidc_failed' } });

    const start = await fetch(`${stack.url}/login/oidc`, { redirect: 'manual' });
    expect(start.status).toBe(303);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const flow = start.headers.getSetCookie().find((c) => c.startsWith('wi_console_oidc='))!;
    expect(flow).toContain('SameSite=Lax');
    const swapped = await fetch(`${stack.url}/login/callback?code=stolen&state=not-the-state`, {
      headers: { accept: 'application/json', cookie: flow.split(';')[0]! },
    });
    expect(swapped.status).toBe(400);
    expect(await swapped.json()).toMatchObject({ error: { code: 'oidc_failed' } });
  });
});
