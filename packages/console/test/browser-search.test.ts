import { existsSync } from 'node:fs';
import { requireTool, TcpProxy, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFailedEvents, startStack, type Stack } from './support.ts';
import { launchChromium, SCREENSHOTS, signIn } from './chromium.ts';

/**
 * Search, the pages of a bad day and the details, in Debian's Chromium driven by playwright-core, against the
 * console on a real PostgreSQL reached through a TCP proxy (cut: the database is gone). Screenshots land in
 * docs/console/.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FAILED = 1500;
const PAYLOAD = {
  id: 'evt_search_1',
  object: 'event',
  data: { object: { customer: 'cus_Ada', customer_details: { email: 'ada@example.com' }, amount: 4200 } },
};

const db = useTestDatabase();
let proxy: TcpProxy;
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const rows = () => page.locator('table.events tbody tr');
// By its role: a row's checkbox is labelled with its event id, which may hold the word.
const searchBox = () => page.getByRole('searchbox', { name: /^Search/ });
const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: false });

describe.runIf(
  requireTool('chromium', existsSync(CHROMIUM), `none at ${CHROMIUM}: apt-get install chromium`),
)('search and failure pages in Chromium', () => {
  beforeAll(async () => {
    proxy = await TcpProxy.start(db.url);
    stack = await startStack(proxy.url(db.url));
    // Idle connections die with the proxy's cut: the pool reports it, the next checkout reconnects.
    stack.pool.on('error', () => {});
    await stack.send('evt_search_1', JSON.stringify(PAYLOAD));
    await insertFailedEvents(stack.pool, 'evt_many', FAILED, 'cus_bulk');
    browser = await launchChromium(CHROMIUM);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(stack.url).origin,
    });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await signIn(page, stack.url, 'Grace Hopper: searching');
  }, 120_000);

  afterAll(async () => {
    await proxy?.restore();
    await browser?.close();
    await stack?.stop();
    await proxy?.close();
  });

  it('finds an event by its customer id as written and its email in any case, with its subject shown', async () => {
    await page.goto(`${stack.url}/events`);
    await searchBox().fill('cus_Ada');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=cus_Ada/);
    expect(await rows().count()).toBe(1);
    expect(await rows().first().locator('td.subject').innerText()).toBe('cus_Ada ada@example.com');
    expect(await page.locator('[data-total]').innerText()).toBe('1–1 of 1 event');
    await searchBox().fill('ADA@example.com');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=ADA%40example.com/);
    expect(await rows().first().locator('td.id').innerText()).toBe('evt_search_1');
    await shot('events-search');
  });

  it('finds events by the start of their id, and counts them', async () => {
    await searchBox().fill('evt_many_0001');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=evt_many_0001/);
    expect(await rows().count()).toBe(10);
    expect(await page.locator('[data-total]').innerText()).toBe('1–10 of 10 events');
    // An id is one token: the table never breaks it across lines.
    expect(
      await page.evaluate<string>(
        `getComputedStyle(document.querySelector('table.events td.id')).whiteSpace`,
      ),
    ).toBe('nowrap');
  });

  it('totals every page of a filter: 1-50 of 1,500, then 51-100', async () => {
    await page.goto(`${stack.url}/events?status=failed`);
    expect(await page.locator('[data-total]').innerText()).toBe('1–50 of 1,500 events');
    await page.getByRole('link', { name: 'Older →' }).click();
    await page.waitForURL(/cursor=/);
    expect(await page.locator('[data-total]').innerText()).toBe('51–100 of 1,500 events');
  });

  it('shows a typo in a filter next to its field, in the page, as a 400', async () => {
    const response = await page.goto(`${stack.url}/events?from=yesterday&status=failed`);
    expect(response?.status()).toBe(400);
    await page.getByRole('alert').filter({ hasText: 'from must be a UTC time' }).waitFor();
    expect(await page.getByLabel(/^From/).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel(/^From/).inputValue()).toBe('yesterday');
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Events' }).waitFor();
    await shot('events-bad-filter');
  });

  it('shows a payload as a tree that folds and copies, and no Replay on a processed event', async () => {
    await stack.pool.query(
      `update webhook_events set status = 'processed', processed_at = now() where event_id = 'evt_search_1'`,
    );
    const missing: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url());
    });
    await page.goto(`${stack.url}/event?provider=stripe&id=evt_search_1`);
    const viewer = page.locator('[data-json-viewer]');
    // Open three levels deep; deeper ones folded until asked.
    const amount = viewer.getByText('"amount": 4200');
    const email = viewer.getByText('"email": "ada@example.com"');
    await amount.waitFor();
    expect(await email.isVisible()).toBe(false);
    await viewer.getByRole('button', { name: 'Collapse all' }).click();
    await amount.waitFor({ state: 'hidden' });
    await viewer.getByRole('button', { name: 'Expand all' }).click();
    await email.waitFor();
    await viewer.getByRole('button', { name: 'Copy JSON' }).click();
    await viewer.getByText('Copied').waitFor();
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(JSON.parse(copied)).toEqual(PAYLOAD);

    expect(await page.getByRole('button', { name: 'Replay unfinished effects' }).count()).toBe(0);
    await page.getByText('nothing to replay').waitFor();
    // The favicon is the console's own: no 404 on the way.
    const icon = await page.locator('link[rel=icon]').getAttribute('href');
    expect((await page.request.get(new URL(icon ?? '', page.url()).toString())).status()).toBe(200);
    expect(missing).toEqual([]);
    await shot('event-json');
  });

  it("the overview's refresh fails: a banner with the last good time, gone when the database is back", async () => {
    await page.goto(`${stack.url}/`);
    await page.locator('#figures').waitFor();
    const banner = page.locator('[data-stale-banner]');
    await proxy.cut();
    try {
      await banner.waitFor({ timeout: 20_000 });
      expect(await banner.innerText()).toMatch(
        /^Refresh failed at \d\d:\d\d:\d\d UTC: the database is not answering.*\(HTTP 503\)\. These figures are from \d\d:\d\d:\d\d UTC, the last good refresh; retrying every 5 seconds\.$/,
      );
      await shot('overview-refresh-failed');
    } finally {
      await proxy.restore();
    }
    await banner.waitFor({ state: 'detached', timeout: 20_000 });
  });

  it('answers a 503 page with navigation and what to check while the database is down', async () => {
    await proxy.cut();
    try {
      const response = await page.goto(`${stack.url}/events?status=failed`);
      expect(response?.status()).toBe(503);
      await page.getByRole('heading', { name: 'The database is not answering' }).waitFor();
      await page.getByRole('heading', { name: 'What to check' }).waitFor();
      await page.getByText('pg_isready').waitFor();
      const nav = page.getByRole('navigation', { name: 'Sections' });
      expect(await nav.getByRole('link').allInnerTexts()).toContain('Dead letters');
      await shot('database-unavailable');
    } finally {
      await proxy.restore();
    }
    // Back: the same address answers again.
    await waitFor(async () => (await page.reload())?.status() === 200, { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Events' }).waitFor();
  });
});
