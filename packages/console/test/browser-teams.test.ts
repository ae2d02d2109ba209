import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import {
  launchChromium,
  requireChromium,
  signInThroughProvider,
  type Browser,
  type Page,
} from '@webhook-inbox/testing/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRoleMap } from '../src/auth/role-map.ts';
import {
  consoleOidc,
  startIdentityProvider,
  TEAM_ROLE_MAPPING,
  type IdentityProvider,
} from './identity-provider.ts';
import { startStack, type Stack } from './support.ts';
import { BILLING_DEAD, DEFAULT_DEAD, insertTeams, LEDGER_ERROR, PLANTED_EMAIL } from './teams.ts';

/**
 * Two teams on one inbox, in Debian's Chromium signed in through a real OpenID Connect provider: the billing team's
 * operator (a role limited to group billing) sees, filters and replays exactly its own failures; a viewer's pages
 * hold no planted customer email.
 */
const db = useTestDatabase();
let idp: IdentityProvider;
let stack: Stack;
let browser: Browser;

const signIn = (login: string): Promise<Page> => signInThroughProvider(browser, stack.url, login);

describe.runIf(requireChromium())('teams in Chromium', () => {
  beforeAll(async () => {
    idp = await startIdentityProvider();
    stack = await startStack(db.url, {
      oidc: consoleOidc(idp, { name: 'Test IdP', roles: parseRoleMap(TEAM_ROLE_MAPPING) }),
    });
    idp.register(`${stack.url}/login/callback`);
    await insertTeams(stack.pool);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await idp?.stop();
  });

  it("the billing operator sees, filters and replays exactly billing's failures", async () => {
    const page = await signIn('bill');
    expect(await page.getByRole('link', { name: 'API tokens' }).count()).toBe(0);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Failures' }).click();
    await page.getByRole('heading', { name: /^Failures by cause/ }).waitFor();
    expect(await page.getByText('notifyCrm').count()).toBe(0);
    await page.getByRole('link', { name: /ledger locked/ }).click();
    await page.getByRole('heading', { name: 'syncLedger failing' }).waitFor();

    await page.getByRole('link', { name: /of its events/ }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await page.locator('[data-failure-filter]').waitFor();
    const listed = await page.locator('table.events td.id a').allTextContents();
    expect(listed).toEqual([BILLING_DEAD]);
    await page.goBack();

    await page.getByRole('link', { name: 'Replay this group…' }).click();
    await page.getByRole('heading', { name: 'Bulk replay: dry run' }).waitFor();
    await page.locator('[data-failure-filter]').waitFor();
    expect(await page.getByRole('status').first().textContent()).toMatch(/^\s*1 event received/);
    // Pressing Filter keeps the failure group's filter: still its one event.
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('[data-failure-filter]').waitFor();
    expect(await page.getByRole('status').first().textContent()).toMatch(/^\s*1 event received/);
    await page.getByRole('button', { name: 'Replay all 1 events' }).click();
    await page.waitForURL(/\/operations\/\d+$/);
    const operation = Number(/\/operations\/(\d+)$/.exec(page.url())?.[1]);

    await waitFor(
      async () =>
        (
          await stack.pool.query(`select 1 from replay_operations where id = $1 and status = 'completed'`, [
            operation,
          ])
        ).rowCount === 1,
      { timeout: 30_000, message: 'the bulk replay completing' },
    );
    const { rows: replayed } = await stack.pool.query<{ event_id: string }>(
      `select event_id from replay_operation_events where operation_id = $1`,
      [operation],
    );
    expect(replayed.map((r) => r.event_id)).toEqual([BILLING_DEAD]);
    const { rows: groups } = await stack.pool.query<{ event_id: string; status: string }>(
      `select event_id, status from webhook_event_groups where consumer_group = 'billing' order by event_id`,
    );
    expect(groups).toEqual([
      { event_id: BILLING_DEAD, status: 'received' },
      { event_id: DEFAULT_DEAD, status: 'processed' },
    ]);
    const { rows: audited } = await stack.pool.query<{ actor: string }>(
      `select actor from audit_log where action = 'bulk_replay_started'`,
    );
    expect(audited).toEqual([{ actor: 'bill@example.com' }]);
  });

  it("a viewer's pages hold no planted customer email and no error text", async () => {
    const page = await signIn('vic');
    for (const path of [
      '/',
      '/events',
      '/dead?group=',
      '/failures',
      `/event?provider=stripe&id=${DEFAULT_DEAD}`,
      `/event?provider=stripe&id=${BILLING_DEAD}`,
    ]) {
      await page.goto(`${stack.url}${path}`);
      const html = await page.content();
      expect(html, path).not.toContain(PLANTED_EMAIL);
      expect(html, path).not.toContain(LEDGER_ERROR);
    }
    expect(await page.getByRole('link', { name: 'API tokens' }).count()).toBe(0);
  });
});
