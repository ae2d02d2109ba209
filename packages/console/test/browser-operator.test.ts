import { existsSync } from 'node:fs';
import { requireTool, useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_GLASS_ACTOR, insertFailedEvents, SCOPED_TYPE, startStack, type Stack } from './support.ts';
import { launchChromium, SCREENSHOTS, signIn } from './chromium.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * An operator's bad day in Debian's Chromium driven by playwright-core, against the console, a real inbox worker
 * and PostgreSQL: an effect's attempts compared, a failure group followed from listed to replayed, a hand-picked
 * replay, and an effect another event of its scope completed. Screenshots land in docs/console/.
 */
const GROUP_EVENTS = 5;
const PICKED = 1500;

const db = useTestDatabase();
let stack: Stack;
let browser: Browser;
let page: Page;

const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: false });

async function one<T extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T> {
  const { rows } = await stack.pool.query<T>(text, values);
  if (!rows[0]) throw new Error(`no row: ${text}`);
  return rows[0];
}

/** The number of `effect_runs` of these events (`like`) with this effect and status. */
async function runs(pattern: string, effect: string, status: string): Promise<number> {
  return (
    await one<{ n: number }>(
      `select count(*)::int as n from effect_runs where event_id like $1 and effect = $2 and status = $3`,
      [pattern, effect, status],
    )
  ).n;
}

async function attempts(eventId: string): Promise<Array<{ attempt: number; outcome: string }>> {
  const { rows } = await stack.pool.query<{ attempt: number; outcome: string }>(
    `select attempt, outcome from effect_attempts where event_id = $1 and effect = 'notifyCrm' order by attempt`,
    [eventId],
  );
  return rows;
}

describe.runIf(
  requireTool('chromium', existsSync(CHROMIUM), `none at ${CHROMIUM}: apt-get install chromium`),
)('an operator in Chromium', () => {
  beforeAll(async () => {
    stack = await startStack(db.url);
    await stack.send('evt_attempts');
    for (let i = 1; i <= GROUP_EVENTS; i++) await stack.send(`evt_group_${i}`);
    await insertFailedEvents(stack.pool, 'evt_pick', PICKED, 'cus_pick');
    await stack.startWorker();
    await waitFor(async () => (await runs('evt_%', 'notifyCrm', 'failed')) === GROUP_EVENTS + 1, {
      timeout: 30_000,
      message: 'the worker failing notifyCrm once per event',
    });
    browser = await launchChromium(CHROMIUM);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(15_000);
    await signIn(page, stack.url, 'Ada Lovelace: the CRM is down');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('shows the overview cards in the one number format', async () => {
    const failed = await one<{ n: number }>(
      `select count(*)::int as n from webhook_events where status = 'failed'`,
    );
    expect(failed.n).toBe(PICKED + GROUP_EVENTS + 1);
    const card = page.locator('section.card', {
      has: page.getByRole('heading', { name: 'Needs attention' }),
    });
    expect(await card.locator('strong.big').first().innerText()).toBe(
      (PICKED + GROUP_EVENTS + 1).toLocaleString('en-US'),
    );
    expect(await card.locator('strong.big').first().innerText()).toMatch(/^\d,\d{3}$/);
  });

  it("lists an effect's attempts as a timeline and compares two of them", async () => {
    const href = `${stack.url}/event?provider=stripe&id=evt_attempts`;
    await page.goto(href);
    await page.getByRole('button', { name: 'Replay unfinished effects' }).click();
    await waitFor(async () => (await attempts('evt_attempts')).length === 2, { timeout: 30_000 });
    stack.downstream.up = true;
    try {
      await page.getByRole('button', { name: 'Replay unfinished effects' }).click();
      await page
        .locator('#effects .effect.status-completed', { hasText: 'notifyCrm' })
        .waitFor({ timeout: 30_000 });
    } finally {
      stack.downstream.up = false;
    }
    await waitFor(async () => (await attempts('evt_attempts')).length === 3, { timeout: 30_000 });
    expect(await attempts('evt_attempts')).toEqual([
      { attempt: 1, outcome: 'failed' },
      { attempt: 2, outcome: 'failed' },
      { attempt: 3, outcome: 'completed' },
    ]);
    await page.goto(href);
    await page.getByRole('heading', { name: 'notifyCrm', level: 3 }).waitFor();
    const timeline = page.locator('form.attempts h3:text-is("notifyCrm") + table');
    expect(await timeline.locator('tbody tr td:nth-child(3)').allInnerTexts()).toEqual(['1', '2', '3']);
    expect(await timeline.locator('tbody tr td:nth-child(4)').allInnerTexts()).toEqual([
      'failed',
      'failed',
      'completed',
    ]);
    expect(await timeline.locator('tbody tr td:nth-child(7)').first().innerText()).toBe(
      'CRM unavailable (503)',
    );
    await page.getByRole('radio', { name: 'A: notifyCrm attempt 1' }).check();
    await page.getByRole('radio', { name: 'B: notifyCrm attempt 3' }).check();
    await page.getByRole('button', { name: 'Compare A and B' }).click();
    await page.waitForURL(/a=notifyCrm%231&b=notifyCrm%233/);
    const compare = page.getByRole('region', { name: 'Attempt comparison' });
    const differs = await compare.locator('tr.differs th').allInnerTexts();
    expect(differs.map((text) => text.replace(/\s*differs$/, ''))).toEqual(
      expect.arrayContaining(['attempt', 'outcome', 'error']),
    );
    expect(await compare.locator('tr', { hasText: 'outcome' }).locator('td').allInnerTexts()).toEqual([
      'failed',
      'completed',
    ]);
    await compare.scrollIntoViewIfNeeded();
    await shot('event-attempts');
  });

  it('lists a failure group, acknowledges it, resolves it, reopens it when it recurs, and replays it as a group', async () => {
    await page.goto(`${stack.url}/failures`);
    const row = page.locator('tbody tr', { hasText: 'notifyCrm' });
    expect(await row.locator('td').allInnerTexts()).toEqual(
      expect.arrayContaining(['default', 'notifyCrm', String(GROUP_EVENTS), 'open']),
    );
    await shot('failures');
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'notifyCrm failing' }).waitFor();
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByText(`acknowledged by ${BREAK_GLASS_ACTOR}`).waitFor();
    expect(
      await one(`select acknowledged_by, resolved_at from failure_groups where effect = 'notifyCrm'`),
    ).toEqual({ acknowledged_by: BREAK_GLASS_ACTOR, resolved_at: null });

    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.getByText(`resolved by ${BREAK_GLASS_ACTOR}`).waitFor();
    await page.goto(`${stack.url}/failures`);
    expect(await page.locator('tbody tr', { hasText: 'notifyCrm' }).count()).toBe(0);

    // It fails again: a new event, the same error.
    await stack.send(`evt_group_${GROUP_EVENTS + 1}`);
    await waitFor(async () => (await runs('evt_group_%', 'notifyCrm', 'failed')) === GROUP_EVENTS + 1, {
      timeout: 30_000,
    });
    await page.reload();
    const reopened = page.locator('tbody tr', { hasText: 'notifyCrm' });
    await reopened.getByText('reopened').waitFor();
    expect(await reopened.locator('td').allInnerTexts()).toEqual(
      expect.arrayContaining([String(GROUP_EVENTS + 1), 'open reopened']),
    );
    await shot('failures-reopened');

    await reopened.getByRole('link').click();
    await page.getByText('reopened: it failed again after it was resolved').waitFor();
    await shot('failure-group');
    await page.getByRole('link', { name: 'Replay this group…' }).click();
    await page.getByText(`${GROUP_EVENTS + 1} events received up to`).waitFor();
    stack.downstream.up = true;
    try {
      await page.getByRole('button', { name: `Replay all ${GROUP_EVENTS + 1} events` }).click();
      await page.locator('#progress .badge', { hasText: 'completed' }).first().waitFor({ timeout: 60_000 });
      await waitFor(async () => (await runs('evt_group_%', 'notifyCrm', 'completed')) === GROUP_EVENTS + 1, {
        timeout: 60_000,
        message: 'the group replayed and its effects completed',
      });
    } finally {
      stack.downstream.up = false;
    }
    await page.goto(`${stack.url}/failures`);
    expect(await page.locator('tbody tr', { hasText: 'notifyCrm' }).count()).toBe(0);
  }, 150_000);

  it('replays exactly the events ticked in the list, and says why when none is', async () => {
    await page.goto(`${stack.url}/events?q=evt_pick_0000&group=default`);
    const rows = page.locator('table.events tbody tr');
    expect(await rows.count()).toBe(9);
    const refused = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Replay selected' }).click();
    expect((await refused).status()).toBe(400);
    await page.getByRole('alert').filter({ hasText: 'no event chosen' }).waitFor();
    expect(await rows.count()).toBe(9);

    await shot('events-selection-refused');
    await page.goto(`${stack.url}/events?q=evt_pick_0000&group=default`);
    // The heading's box ticks every row of the page, and clears them.
    const all = page.getByRole('checkbox', { name: 'Select every event of this page' });
    const selected = page.locator('[data-selected-count]');
    await all.check();
    expect(await page.locator('input[name=event]:checked').count()).toBe(9);
    expect(await selected.innerText()).toBe('9 selected');
    await all.uncheck();
    expect(await page.locator('input[name=event]:checked').count()).toBe(0);
    await page.getByRole('checkbox', { name: 'Select stripe evt_pick_00002' }).check();
    await page.getByRole('checkbox', { name: 'Select stripe evt_pick_00007' }).check();
    expect(await selected.innerText()).toBe('2 selected');
    await shot('events-selected');
    stack.downstream.up = true;
    try {
      await page.getByRole('button', { name: 'Replay selected' }).click();
      await page.getByRole('heading', { name: /^Bulk replay \d+$/ }).waitFor();
      await page.getByText('2 chosen events: stripe evt_pick_00002, stripe evt_pick_00007').waitFor();
      await page.locator('#progress .outcome', { hasText: '2 processed' }).waitFor({ timeout: 60_000 });
    } finally {
      stack.downstream.up = false;
    }
    await shot('operation-selected');
    const id = Number(/\/operations\/(\d+)$/.exec(page.url())?.[1]);
    const { rows: replayed } = await stack.pool.query<{ event_id: string }>(
      `select event_id from replay_operation_events where operation_id = $1 order by event_id`,
      [id],
    );
    expect(replayed.map((r) => r.event_id)).toEqual(['evt_pick_00002', 'evt_pick_00007']);
    const { rows: processed } = await stack.pool.query<{ event_id: string }>(
      `select event_id from webhook_events where event_id like 'evt_pick%' and status = 'processed' order by 1`,
    );
    expect(processed.map((r) => r.event_id)).toEqual(['evt_pick_00002', 'evt_pick_00007']);
  }, 120_000);

  it('links an effect another event of its scope completed to that event', async () => {
    const payload = (id: string) => JSON.stringify({ id, data: { object: { customer: 'cus_scope' } } });
    await stack.send('evt_scope_first', payload('evt_scope_first'), SCOPED_TYPE);
    await waitFor(async () => (await runs('evt_scope_first', 'sendWelcomeEmail', 'completed')) === 1, {
      timeout: 30_000,
    });
    await stack.send('evt_scope_second', payload('evt_scope_second'), SCOPED_TYPE);
    await waitFor(async () => (await runs('evt_scope_second', 'sendWelcomeEmail', 'completed')) === 1, {
      timeout: 30_000,
    });
    expect(
      await one(
        `select k.provider, k.event_id, r.attempts from effect_runs r join idempotency_keys k on k.key = r.idempotency_key
          where r.event_id = 'evt_scope_second'`,
      ),
    ).toEqual({ provider: 'stripe', event_id: 'evt_scope_first', attempts: 0 });

    await page.goto(`${stack.url}/event?provider=stripe&id=evt_scope_second`);
    const effect = page.locator('#effects .effect', { hasText: 'sendWelcomeEmail' });
    expect(await effect.locator('.completed-by').innerText()).toMatch(
      /^completed by stripe evt_scope_first at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/,
    );
    expect(await effect.getByText('0 attempts').count()).toBe(0);
    await shot('event-completed-by');
    await effect.getByRole('link', { name: 'stripe evt_scope_first' }).click();
    await page.getByRole('heading', { name: 'stripe · evt_scope_first' }).waitFor();
    // The event that ran it says how many attempts it took, not "completed by" itself.
    const own = page.locator('#effects .effect', { hasText: 'sendWelcomeEmail' });
    expect(await own.locator('.completed-by').count()).toBe(0);
    await own.getByText('1 attempt', { exact: true }).waitFor();
  });
});
