import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requireTool, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import pg from 'pg';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, BREAK_GLASS_ACTOR, insertFailedEvents, startStack, type Stack } from './support.ts';
import { receiverEnv, spawnReceiver, stripeDelivery, type Delivery } from '@webhook-inbox/scenarios/receiver';

/**
 * The console end to end in a real browser: Debian's Chromium (`apt-get install chromium`; .ci/run installs it)
 * driven by playwright-core, against the console, a real inbox worker and PostgreSQL. Screenshots land in
 * docs/console/ for the README.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const SCREENSHOTS = fileURLToPath(new URL('../../../docs/console/', import.meta.url));
const BULK = 1500;
/** What the real receiver is sent before the console opens: the overview charts these per minute. */
const SENT = { accepted: 4, duplicate: 2, refused: 3 };

const db = useTestDatabase();
let stack: Stack;
let browser: Browser;
let page: Page;
/** The console's clock: the expiry case moves it past the session's lifetime. */
let offsetMs = 0;

async function shot(name: string, target: Page = page): Promise<void> {
  await target.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: false });
}

/** A Stripe event no effect handles: the worker settles it as processed, nothing fails. */
function quietDelivery(): Delivery {
  const id = `evt_quiet_${Math.random().toString(36).slice(2)}`;
  return stripeDelivery({
    id,
    body: JSON.stringify({ id, object: 'event', type: 'customer.created', data: { object: {} } }),
  });
}

/**
 * A real receiver (its own process) answers deliveries accepted, duplicate and refused, then stops gracefully,
 * which writes its last counts into webhook_delivery_counts.
 */
async function deliverThroughReceiver(): Promise<void> {
  const receiver = await spawnReceiver(receiverEnv(db.url));
  try {
    const post = async (delivery: Delivery) =>
      (
        await fetch(`${receiver.url}${delivery.path}`, {
          method: 'POST',
          body: delivery.body,
          headers: delivery.headers,
        })
      ).status;
    const first = quietDelivery();
    for (let i = 0; i < SENT.accepted; i++) expect(await post(i === 0 ? first : quietDelivery())).toBe(200);
    for (let i = 0; i < SENT.duplicate; i++) expect(await post(first)).toBe(200);
    for (let i = 0; i < SENT.refused; i++) {
      expect(await post({ ...quietDelivery(), headers: { 'Stripe-Signature': 't=1,v1=00' } })).toBe(400);
    }
  } finally {
    expect((await receiver.stop()).code).toBe(0);
  }
}

async function effectStatus(eventId: string, effect: string): Promise<string | undefined> {
  const { rows } = await stack.pool.query<{ status: string }>(
    'select status from effect_runs where event_id = $1 and effect = $2',
    [eventId, effect],
  );
  return rows[0]?.status;
}

describe.runIf(
  requireTool(
    'chromium',
    hasChromium,
    `none at ${CHROMIUM}: apt-get install chromium, or CHROMIUM_PATH=<path>`,
  ),
)('the console in Chromium', () => {
  beforeAll(async () => {
    stack = await startStack(db.url, { clock: () => new Date(Date.now() + offsetMs) });
    await stack.send(
      'evt_browser_1',
      '{"id":"evt_browser_1","data":{"object":{"customer":"cus_ada","amount_total":12345678901234567890}}}',
    );
    await insertFailedEvents(stack.pool, 'evt_many', BULK, 'cus_bulk');
    await deliverThroughReceiver();
    await stack.startWorker();
    await waitFor(async () => (await effectStatus('evt_browser_1', 'notifyCrm')) === 'failed', {
      timeout: 30_000,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('refuses a wrong token, then signs in with the admin token', async () => {
    await page.goto(`${stack.url}/`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    await page.getByLabel('Why').fill('Ada Lovelace: the identity provider is down');
    await page.getByLabel('Admin token').fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That is not the admin token.').waitFor();
    await shot('login-refused');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('failed', { exact: false }).first().waitFor();
    // uPlot, served by the console, draws the charts (a canvas with a legend per series).
    await page.locator('[data-chart=statuses] canvas').waitFor();
    expect(await page.locator('[data-chart=statuses] .u-legend .u-label').allInnerTexts()).toEqual([
      'Time',
      'processed',
      'failed',
      'dead',
      'waiting',
    ]);
    await shot('overview');
  });

  it("charts the real receiver's accepted, duplicate and refused requests", async () => {
    const requests = page.locator('[data-chart=requests]');
    await requests.locator('canvas').waitFor();
    expect(await requests.locator('.u-legend .u-label').allInnerTexts()).toEqual([
      'Time',
      'accepted',
      'duplicate',
      'refused',
      'not recorded',
    ]);
    const series = JSON.parse((await requests.getAttribute('data-series')) ?? '{}') as {
      values: number[][];
    };
    const total = (i: number) => (series.values[i] ?? []).reduce((a, b) => a + b, 0);
    expect([total(0), total(1), total(2), total(3)]).toEqual([
      SENT.accepted,
      SENT.duplicate,
      SENT.refused,
      0,
    ]);

    // Drawn: each series' color is on the canvas.
    // (A string: this package's types have no DOM.)
    const colors = await page.evaluate<Record<string, number>>(`(() => {
      const canvas = document.querySelector('[data-chart=requests] canvas');
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      const found = {};
      for (let i = 0; i < data.length; i += 4) {
        const key = data[i] + ',' + data[i + 1] + ',' + data[i + 2];
        found[key] = (found[key] || 0) + 1;
      }
      return found;
    })()`);
    for (const rgb of ['26,127,55', '11,92,173', '207,34,46']) expect(colors[rgb] ?? 0).toBeGreaterThan(10);

    // The legend under the cursor says what was counted in that minute. The figures refresh every 5 s, which
    // draws a new chart (no cursor on it) and may start a new minute: each try reads the series afresh, moves the
    // mouse off the chart and onto the busiest minute (a real move, so the new chart sees it), and counts only
    // when the series was the same before and after the reading.
    let legend: string[] = [];
    let expected: string[] = [];
    await requests.scrollIntoViewIfNeeded();
    await waitFor(
      async () => {
        const before = (await requests.getAttribute('data-series')) ?? '{}';
        const { values } = JSON.parse(before) as { values: number[][] };
        const accepted = values[0] ?? [];
        const busiest = accepted.indexOf(Math.max(...accepted));
        expected = [0, 1, 2, 3].map((i) => String(values[i]?.[busiest]));
        const box = await requests.locator('.u-over').boundingBox();
        if (!box) return false;
        const x = Math.min(box.width - 1, (box.width * busiest) / (accepted.length - 1));
        await page.mouse.move(0, 0);
        await page.mouse.move(box.x + x, box.y + box.height / 2);
        legend = (await requests.locator('.u-legend .u-value').allInnerTexts()).slice(1);
        const after = await requests.getAttribute('data-series');
        return after === before && JSON.stringify(legend) === JSON.stringify(expected);
      },
      { timeout: 60_000, message: 'the legend under the cursor' },
    ).catch((error: unknown) => {
      throw new Error(
        `the legend at the busiest minute read ${legend.join(', ')}, not ${expected.join(', ')}`,
        {
          cause: error,
        },
      );
    });
    await shot('overview-charts');
    await page.mouse.move(0, 0);
  });

  it('filters the events and opens a failed one', async () => {
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByLabel('Payload path').fill('data.object.customer');
    await page.getByLabel('equals').fill('cus_ada');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=failed/);
    const rows = page.locator('table.events tbody tr');
    expect(await rows.count()).toBe(1);
    await shot('events-filtered');
    await page.getByRole('link', { name: 'evt_browser_1' }).click();
    await page.getByRole('heading', { name: 'stripe · evt_browser_1' }).waitFor();
    // The big integer keeps its 20 digits.
    await page.getByText('"amount_total": 12345678901234567890').waitFor();
    expect(await page.locator('#effects .effect.status-failed strong').innerText()).toBe('notifyCrm');
    await shot('event-failed');
  });

  it('replays it and watches its failed effect turn completed', async () => {
    stack.downstream.up = true;
    await page.getByRole('button', { name: 'Replay unfinished effects' }).click();
    await page.getByText('Replay queued: notifyCrm will run.').waitFor();
    // The effects list refreshes itself; no reload.
    await page
      .locator('#effects .effect.status-completed', { hasText: 'notifyCrm' })
      .waitFor({ timeout: 30_000 });
    expect(await effectStatus('evt_browser_1', 'notifyCrm')).toBe('completed');
    // The header's status follows the timeline (both come from each refresh), down to the settled event.
    await page.locator('#event-facts .badge.status-processed').waitFor({ timeout: 30_000 });
    expect(await page.locator('#effects > .hint').innerText()).toBe('Event processed');
    // The queue jobs follow too: the replay's job, completed, without a reload.
    await page.locator('#event-jobs .badge.status-completed').waitFor();
    await shot('event-replayed');
  });

  it(`dry-runs and bulk-replays ${BULK.toLocaleString('en')} events with progress to the end`, async () => {
    await page.goto(
      `${stack.url}/events?status=failed&path=data.object.customer&value=cus_bulk&group=default`,
    );
    await page.getByRole('link', { name: 'Bulk replay these events…' }).click();
    await page.getByText(`${BULK.toLocaleString('en')} events received up to`).waitFor();
    expect(await page.locator('table.events tbody tr').count()).toBe(20);
    await shot('bulk-dry-run');
    // One event in the middle is held (as a worker settling it would), so the replay waits at it and the page
    // shows it part way, whatever the machine's speed; released once the page has shown it.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    const seen = new Set<string>();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from webhook_events where event_id = 'evt_many_00700' for update`);
      await page.getByRole('button', { name: `Replay all ${BULK.toLocaleString('en')} events` }).click();
      await page.getByRole('heading', { name: /^Bulk replay \d+$/ }).waitFor();
      await waitFor(
        async () => {
          const done = await page.locator('#progress .done').innerText();
          seen.add(done);
          return done !== '0' && done !== BULK.toLocaleString('en');
        },
        { timeout: 90_000, interval: 100, message: 'the progress part way' },
      );
      await shot('bulk-progress');
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
    await waitFor(
      async () => {
        seen.add(await page.locator('#progress .done').innerText());
        return (await page.locator('#progress .badge').innerText()) === 'completed';
      },
      { timeout: 90_000, interval: 100 },
    );
    expect(await page.locator('#progress .done').innerText()).toBe(BULK.toLocaleString('en'));
    // The page showed the count rising, polled by htmx, not just the end.
    expect(seen.size).toBeGreaterThan(1);
    await shot('bulk-completed');
    await waitFor(
      async () => {
        const { rows } = await stack.pool.query<{ n: number }>(
          `select count(*)::int as n from webhook_events where event_id like 'evt_many%' and status = 'processed'`,
        );
        return rows[0]?.n === BULK;
      },
      { timeout: 90_000, message: `the worker processing the ${BULK} replayed events` },
    );
  }, 200_000);

  it('shows the actions in the audit log', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    const actions = await page.locator('table.audit tbody tr td:nth-child(4)').allInnerTexts();
    expect(actions.slice(0, 4)).toEqual(['bulk_replay_started', 'replay', 'login', 'login_refused']);
    await page.getByRole('cell', { name: BREAK_GLASS_ACTOR }).first().waitFor();
    await shot('audit');
  });

  it('refuses a POST without the CSRF token, even from the console page itself', async () => {
    const status = await page.evaluate(async (url) => {
      const body = new URLSearchParams({ provider: 'stripe', id: 'evt_browser_1' });
      return (await fetch(`${url}/event/replay`, { method: 'POST', body })).status;
    }, stack.url);
    expect(status).toBe(403);
  });

  it('reads well at a phone width', async () => {
    const phone = await (
      await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
    ).newPage();
    await phone.context().addCookies(await page.context().cookies());
    await phone.goto(`${stack.url}/`);
    await phone.getByRole('heading', { name: 'Overview' }).waitFor();
    await shot('overview-phone', phone);
    await phone.goto(`${stack.url}/event?provider=stripe&id=evt_browser_1`);
    await phone.getByRole('heading', { name: 'Effects' }).waitFor();
    await shot('event-phone', phone);
    // Nothing wider than the screen but the tables and code blocks, which scroll inside their own box.
    const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.close();
  });

  it('sends an expired session back to the sign-in page', async () => {
    offsetMs = 9 * 3_600_000;
    try {
      await page.goto(`${stack.url}/events`);
      await page.getByText('Your session has expired. Sign in again.').waitFor();
      expect(new URL(page.url()).pathname).toBe('/console/login');
    } finally {
      offsetMs = 0;
    }
  });
});
