import { ingest } from '@webhook-inbox/inbox';
import { createRecordedAlerter } from '@webhook-inbox/operator';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFailedEvents, login, startStack, type Client, type Stack } from './support.ts';

const db = useTestDatabase();
let stack: Stack;
let client: Client;

const SHOPIFY_KEY = 'shop.example:orders/create:5678901234567890123';
const BIG = '5678901234567890123';

const ids = (page: string) =>
  [...page.matchAll(/<td class="id"><a href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);
const unescape = (text: string) =>
  text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');

async function effect(eventId: string, name: string) {
  const { rows } = await stack.pool.query<{ status: string; forced_at: Date | null }>(
    'select status, forced_at from effect_runs where event_id = $1 and effect = $2',
    [eventId, name],
  );
  return rows[0];
}

beforeAll(async () => {
  stack = await startStack(db.url);
  await stack.send(
    'evt_a',
    JSON.stringify({ id: 'evt_a', data: { object: { customer: 'cus_A', amount: 100 } } }),
  );
  await stack.send(
    'evt_b',
    JSON.stringify({ id: 'evt_b', data: { object: { customer: 'cus_B', amount: 200 } } }),
  );
  await ingest(
    { pool: stack.pool, boss: stack.boss },
    {
      provider: 'shopify',
      eventId: SHOPIFY_KEY,
      type: 'orders/create',
      payloadText: `{"id":${BIG},"customer":{"id":${BIG}}}`,
      headers: { 'x-shopify-topic': 'orders/create', 'x-shopify-shop-domain': 'shop.example' },
    },
  );
  await insertFailedEvents(stack.pool, 'evt_page', 120);
  client = await login(stack.url);
});
afterAll(async () => {
  await stack?.stop();
});

describe('events page', () => {
  it('filters by provider, by event id without a provider, and by a payload path', async () => {
    expect(ids(await (await client.get('/events?provider=shopify')).text())).toEqual([SHOPIFY_KEY]);
    expect(
      ids(await (await client.get(`/events?eventId=${encodeURIComponent(SHOPIFY_KEY)}`)).text()),
    ).toEqual([SHOPIFY_KEY]);
    expect(ids(await (await client.get('/events?path=data.object.customer&value=cus_B')).text())).toEqual([
      'evt_b',
    ]);
    // A JSON value is matched as JSON: the number 100, not the text "100"; a big integer keeps its digits.
    expect(ids(await (await client.get('/events?path=data.object.amount&value=100')).text())).toEqual([
      'evt_a',
    ]);
    expect(ids(await (await client.get('/events?path=data.object.amount&value=%22100%22')).text())).toEqual(
      [],
    );
    expect(ids(await (await client.get(`/events?path=customer.id&value=${BIG}`)).text())).toEqual([
      SHOPIFY_KEY,
    ]);
    expect(
      ids(await (await client.get(`/events?path=customer.id&value=${BIG.slice(0, -1)}4`)).text()),
    ).toEqual([]);
  });

  it('filters by status and time range', async () => {
    const failed = ids(await (await client.get('/events?status=failed&from=2h')).text());
    expect(failed).toHaveLength(50);
    expect(failed.every((id) => id?.startsWith('evt_page_'))).toBe(true);
    expect(ids(await (await client.get('/events?from=2h&to=30m&provider=stripe')).text())).toHaveLength(50);
    expect(ids(await (await client.get('/events?from=10m')).text())).toHaveLength(3);
  });

  it('pages with a cursor through every matching event once, newest first', async () => {
    let path: string | undefined = '/events?status=failed';
    const seen: string[] = [];
    while (path) {
      const page: string = await (await client.get(path)).text();
      seen.push(...(ids(page) as string[]));
      const older: string | undefined = /<a rel="next" href="([^"]+)"/.exec(page)?.[1];
      path = older ? unescape(older).replace('/console', '') : undefined;
    }
    const expected = Array.from({ length: 120 }, (_, i) => `evt_page_${String(120 - i).padStart(5, '0')}`);
    expect(seen).toEqual(expected);
  });

  it("answers 400 with the form and the field's error for a filter it cannot read", async () => {
    const cases = [
      ['status=lost', 'f-status', 'status must be one of'],
      ['from=yesterday', 'f-from', 'from must be a UTC time'],
      ['from=2026-12-03&to=2026-12-02', 'f-to', 'to must be later than from'],
      ['path=data..x&value=1', 'f-path', 'the payload path is keys separated by dots'],
      ['cursor=nope', undefined, 'the cursor is not one this page gave'],
    ] as const;
    for (const [query, field, message] of cases) {
      const response = await client.get(`/events?${query}`);
      expect(response.status, query).toBe(400);
      const page = await response.text();
      // The page itself, with its navigation and the form, not an error page.
      expect(page, query).toContain('<form class="filters"');
      expect(page, query).toContain('aria-current="page"');
      expect(page, query).toContain('data-code="invalid_input"');
      expect(page, query).toContain(message);
      if (field) expect(page, query).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
    }
  });
});

describe('dead letters page', () => {
  it('lists the dead events only', async () => {
    await stack.pool.query(`update webhook_events set status = 'dead' where event_id = 'evt_page_00007'`);
    expect(ids(await (await client.get('/dead')).text())).toEqual(['evt_page_00007']);
    await stack.pool.query(`update webhook_events set status = 'failed' where event_id = 'evt_page_00007'`);
  });
});

describe('event page', () => {
  it('shows headers, the payload with every digit, the queue job and the CLI command', async () => {
    const page = await (
      await client.get(`/event?provider=shopify&id=${encodeURIComponent(SHOPIFY_KEY)}`)
    ).text();
    expect(page).toContain(`&quot;id&quot;: ${BIG}`);
    expect(page).toContain('x-shopify-topic');
    expect(unescape(page)).toContain(`npx webhook-inbox replay shopify ${SHOPIFY_KEY}`);
    expect(page).toMatch(/webhook-events<\/td>\s*<td><span class="badge status-created">created<\/span>/);
  });

  it("shows the event's rows in the other consumer groups, each with its replay command", async () => {
    const key = encodeURIComponent(SHOPIFY_KEY);
    expect(await (await client.get(`/event?provider=shopify&id=${key}`)).text()).not.toContain(
      'Consumer groups',
    );
    await stack.pool.query(
      `insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
       values ('shopify', $1, 'billing', 'failed', 2, 'recordRevenue: ledger locked')`,
      [SHOPIFY_KEY],
    );
    try {
      const page = await (await client.get(`/event?provider=shopify&id=${key}`)).text();
      expect(page).toContain('Consumer groups');
      expect(page).toMatch(/billing<\/td>\s*<td><span class="badge status-failed">failed<\/span>/);
      expect(page).toContain('recordRevenue: ledger locked');
      expect(unescape(page)).toContain(`npx webhook-inbox replay shopify ${SHOPIFY_KEY} --group billing`);
    } finally {
      await stack.pool.query(`delete from webhook_event_groups`);
    }
  });

  it('answers 404 not_found for an unknown event', async () => {
    const response = await client.get('/event?provider=stripe&id=evt_nope');
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('not_found');
  });

  it('replays a failed event in one click: only the failed effect runs, and it completes', async () => {
    await stack.startWorker();
    // The attempt is over once both are settled: the failed effect is recorded before recordOrder, which ran
    // beside it in the transaction that rolled back, has run again on its own.
    await waitFor(
      async () =>
        (await effect('evt_a', 'notifyCrm'))?.status === 'failed' &&
        (await effect('evt_a', 'recordOrder'))?.status === 'completed',
      { timeout: 20_000 },
    );
    const before = await (await client.get('/event?provider=stripe&id=evt_a')).text();
    expect(before).toMatch(/<strong>notifyCrm<\/strong> <span class="badge status-failed">failed<\/span>/);
    expect(before).toContain('last error: CRM unavailable (503)');
    expect(before).toMatch(
      /<strong>recordOrder<\/strong> <span class="badge status-completed">completed<\/span>/,
    );

    stack.downstream.up = true;
    const replay = await client.post('/event/replay', {
      _csrf: client.csrf,
      provider: 'stripe',
      id: 'evt_a',
    });
    expect(replay.status).toBe(303);
    const flash = unescape(decodeURIComponent(replay.headers.get('location') ?? '').replaceAll('+', ' '));
    expect(flash).toContain('Replay queued: notifyCrm will run.');
    await waitFor(async () => (await effect('evt_a', 'notifyCrm'))?.status === 'completed', {
      timeout: 20_000,
    });
    expect((await effect('evt_a', 'recordOrder'))?.forced_at).toBeNull();
  });

  it('forces a completed effect only through a confirmation that says what runs again', async () => {
    const confirm = await (await client.get('/event/force?provider=stripe&id=evt_a&effect=notifyCrm')).text();
    expect(confirm).toContain('Run notifyCrm again?');
    expect(confirm).toContain('happens again');
    expect(confirm).toContain('Will run: notifyCrm.');
    const calls = stack.downstream.calls;
    const forced = await client.post('/event/replay', {
      _csrf: client.csrf,
      provider: 'stripe',
      id: 'evt_a',
      force: 'notifyCrm',
    });
    expect(forced.status).toBe(303);
    await waitFor(
      async () =>
        stack.downstream.calls > calls && (await effect('evt_a', 'notifyCrm'))?.status === 'completed',
    );
    expect((await effect('evt_a', 'notifyCrm'))?.forced_at).toBeInstanceOf(Date);
    const { rows } = await stack.pool.query<{ action: string; target: string }>(
      `select action, target from audit_log where action like 'replay%' order by id`,
    );
    expect(rows).toEqual([
      { action: 'replay', target: 'stripe evt_a' },
      { action: 'replay_forced', target: 'stripe evt_a' },
    ]);
  });

  it('refuses to force an effect that is not registered', async () => {
    const response = await client.get('/event/force?provider=stripe&id=evt_a&effect=sendFax');
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('unknown_effect');
  });
});

describe('alerts page', () => {
  it('shows the alerts the alerter recorded, grouped by problem, with how often and when', async () => {
    // The receiver's and the worker's wiring: an alerter whose messages the journal records in alerts_sent.
    const silent = { info: () => {}, warn: () => {}, error: () => {} };
    const alerter = createRecordedAlerter(stack.pool, { logger: silent, service: 'webhook-inbox worker' });
    for (const eventId of ['evt_crm_1', 'evt_crm_2', 'evt_crm_3']) {
      alerter.notify({
        kind: 'effect_failed',
        provider: 'stripe',
        eventId,
        type: 'checkout.session.completed',
        effect: 'notifyCrm',
        error: `CRM unavailable (503) for ${eventId}`,
      });
    }
    alerter.notify({
      kind: 'signature_failures',
      provider: 'shopify',
      count: 40,
      threshold: 20,
      windowMs: 60_000,
      since: new Date(),
      complete: false,
    });
    // The first of each problem at once, the two repeats of the CRM failure as one summary at close.
    await alerter.close();

    const page = unescape(await (await client.get('/alerts')).text());
    const groups = [
      ...page.matchAll(
        /<tr>\s*<td><code>(\w+)<\/code><\/td>\s*<td>([^<]*)<\/td>\s*<td class="num">(\d+)<\/td>\s*<td class="num">\s*(\d+)/g,
      ),
    ].map((m) => [m[1], m[2], Number(m[3]), Number(m[4])]);
    expect(groups).toEqual(
      expect.arrayContaining([
        ['effect_failed', 'stripe · checkout.session.completed · notifyCrm', 3, 2],
        ['signature_failures', 'shopify', 1, 1],
      ]),
    );
    expect(groups).toHaveLength(2);
    // Without ALERT_WEBHOOK_URL an alert is logged, and says so; the newest one links its event.
    expect(page).toContain('<span class="badge status-logged">logged</span>');
    expect(page).toContain('href="/console/event?provider=stripe&id=evt_crm_3"');
  });
});
