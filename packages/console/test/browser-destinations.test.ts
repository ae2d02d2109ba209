/**
 * An operator and a failing destination in Debian's Chromium (playwright-core), against the console, real
 * deliveries and PostgreSQL: the destination answers 503 to one delivery and hangs up on the other, so its circuit
 * opens; the operator finds it from the Destinations list, reads its state and its failures by cause, and pauses it.
 * The pause is read back from `destination_states`, and its `audit_log` row names who and from where. The
 * screenshot lands in docs/console/.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requireTool, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, SCREENSHOTS, signIn } from './chromium.ts';
import {
  BREAK_GLASS_ACTOR,
  startBillingDestinations,
  startStack,
  type BillingDestinations,
  type Stack,
} from './support.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const db = useTestDatabase();
let stack: Stack;
let billing: BillingDestinations | undefined;
let endpoint: http.Server;
let browser: Browser;
let page: Page;

async function destinationState(): Promise<{ state: string; reason: string | null }> {
  const { rows } = await stack.pool.query<{ state: string; reason: string | null }>(
    `select state, reason from destination_states where name = 'crm'`,
  );
  return rows[0] ?? { state: 'missing', reason: null };
}

describe.runIf(
  requireTool('chromium', existsSync(CHROMIUM), `none at ${CHROMIUM}: apt-get install chromium`),
)('an operator pauses a failing destination in Chromium', () => {
  beforeAll(async () => {
    stack = await startStack(db.url);
    // The first request gets a 503, every later one a connection closed without an answer.
    let requests = 0;
    endpoint = http.createServer((req, res) => {
      if (requests++ === 0) req.resume().on('end', () => res.writeHead(503).end('down for maintenance'));
      else req.socket.destroy();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;
    billing = await startBillingDestinations(
      db.url,
      `destinations:
  crm:
    url: "${url}"
    events: [{ source: stripe }]
    group: billing
    secrets: [whsec_${randomBytes(32).toString('base64')}]
    allowPrivateNetwork: true
    retrySchedule: [0, 1h]
    concurrency: 1
    breaker: { failures: 2, probeAfter: 1h }
`,
    );
    for (const id of ['evt_crm_1', 'evt_crm_2']) await stack.send(id, JSON.stringify({ id }));
    await waitFor(async () => (await destinationState()).state === 'open', {
      timeout: 60_000,
      message: "crm's circuit open after its two failures",
    });
    browser = await launchChromium(CHROMIUM);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(15_000);
    await signIn(page, stack.url, 'Grace Hopper: the CRM endpoint is failing');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await billing?.stop();
    await stack?.stop();
    endpoint?.closeAllConnections();
    endpoint?.close();
  });

  it("shows the destination's open circuit and its failures by cause", async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('link', { name: 'crm', exact: true }).click();
    await page.getByRole('heading', { name: /Destination crm/ }).waitFor();

    const state = page.locator('dl.facts dt:has-text("State") + dd');
    await expect.poll(() => state.innerText()).toContain('circuit open: 2 failures in a row');
    const causes = page.locator('section', { has: page.getByRole('heading', { name: /Failures by cause/ }) });
    const rows = causes.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const texts = await rows.allInnerTexts();
    // One cause answered 503; the other had no answer at all.
    expect(texts.some((text) => text.includes('503'))).toBe(true);
    expect(texts.some((text) => text.includes('no answer'))).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}destination-failing.png`, fullPage: true });
  });

  it('pauses it: the page, PostgreSQL and the audit log agree', async () => {
    await page.getByRole('button', { name: 'Pause deliveries' }).click();
    await page.getByRole('button', { name: 'Resume deliveries' }).waitFor();
    expect(await page.locator('dl.facts dt:has-text("State") + dd').innerText()).toContain(
      `paused by ${BREAK_GLASS_ACTOR}`,
    );

    expect(await destinationState()).toEqual({ state: 'paused', reason: `paused by ${BREAK_GLASS_ACTOR}` });
    const { rows } = await stack.pool.query<{
      action: string;
      actor: string;
      address: string;
      before: string;
    }>(
      `select action, actor, remote_address as address, details->>'before' as before
         from audit_log where target = 'crm' order by id`,
    );
    expect(rows).toEqual([
      { action: 'destination_paused', actor: BREAK_GLASS_ACTOR, address: '127.0.0.1', before: 'open' },
    ]);
  });
});
