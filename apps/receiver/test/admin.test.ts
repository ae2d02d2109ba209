import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, send, shopifyDelivery, sql, stripeDelivery, type TestApp } from './helpers.ts';

// The admin API on the real app: list with filters and a cursor, show, replay; bearer auth; off when unset.

const db = useTestDatabase();
const TOKEN = 'admin-token-for-tests-0123456789';
let t: TestApp;
let disabled: TestApp;

beforeAll(async () => {
  t = await createTestApp(db.url, { adminToken: TOKEN });
  disabled = await createTestApp(db.url);
});
afterAll(async () => {
  await t?.close();
  await disabled?.close();
});

const get = (path: string, token: string | undefined = TOKEN) =>
  Promise.resolve(t.app.request(path, { headers: token ? { authorization: `Bearer ${token}` } : {} }));
const post = (path: string, body?: unknown) =>
  Promise.resolve(
    t.app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

describe('admin API', () => {
  it('refuses a missing or wrong token with 401, and does not exist without ADMIN_TOKEN', async () => {
    expect((await get('/admin/events', '')).status).toBe(401);
    const wrong = await get('/admin/events', 'admin-token-for-tests-WRONG00000');
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: { code: 'unauthorized' } });
    const off = await disabled.app.request('/admin/events', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(off.status).toBe(404);
  });

  it('lists with filters and pages with a cursor', async () => {
    for (let i = 0; i < 5; i++) {
      const id = `evt_admin_${i}`;
      const type = i % 2 ? 'customer.subscription.updated' : 'checkout.session.completed';
      const body = JSON.stringify({
        id,
        object: 'event',
        type,
        created: 1_700_000_000,
        data: { object: {} },
      });
      const delivery = stripeDelivery({ id, body });
      expect((await send(t.app, delivery)).status).toBe(200);
    }
    const filtered = await get('/admin/events?provider=stripe&type=customer.subscription.updated&since=1h');
    expect(filtered.status).toBe(200);
    const page = (await filtered.json()) as { events: { eventId: string; status: string }[] };
    expect(page.events.map((e) => e.eventId).sort()).toEqual(['evt_admin_1', 'evt_admin_3']);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await get(`/admin/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      const body = (await response.json()) as { events: { eventId: string }[]; nextCursor: string | null };
      seen.push(...body.events.map((e) => e.eventId));
      cursor = body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(['evt_admin_0', 'evt_admin_4']));

    expect((await get('/admin/events?status=bogus')).status).toBe(400);
    expect((await get('/admin/events?since=yesterday')).status).toBe(400);
    expect((await get('/admin/events?limit=100000')).status).toBe(400);
  });

  it('shows one event with its effects, Shopify keys with slashes included', async () => {
    const shown = await get('/admin/events/stripe/evt_admin_0');
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({
      eventId: 'evt_admin_0',
      type: 'checkout.session.completed',
      effects: [],
    });

    const delivery = shopifyDelivery({ eventId: 'admin-shop-event' });
    expect((await send(t.app, delivery)).status).toBe(200);
    const eventId = delivery.key;
    expect(eventId).toContain('/');
    for (const path of [
      `/admin/events/shopify/${encodeURIComponent(eventId)}`,
      `/admin/events/shopify/${eventId}`,
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      const body = (await response.json()) as { eventId: string; payload: { id: unknown } };
      expect(body.eventId).toBe(eventId);
      // Order ids above 2^53 come back with every digit.
      expect(String(body.payload.id)).toMatch(/^\d{16,}$/);
    }
    expect((await get('/admin/events/stripe/evt_missing')).status).toBe(404);
  });

  it('replays through the queue: a new job in pg-boss, status back to received', async () => {
    const jobs = async () =>
      (await sql(db.url, `select count(*)::int as n from pgboss.job where data->>'eventId' = 'evt_admin_2'`))
        .rows[0] as { n: number };
    const before = await jobs();
    const response = await post('/admin/events/stripe/evt_admin_2/replay');
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ eventId: 'evt_admin_2', enqueued: true, effects: null });
    expect((await jobs()).n).toBe(before.n + 1);
    const status = await sql(db.url, `select status from webhook_events where event_id = 'evt_admin_2'`);
    expect(status.rows).toEqual([{ status: 'received' }]);

    expect((await post('/admin/events/stripe/evt_missing/replay')).status).toBe(404);
    const force = await post('/admin/events/stripe/evt_admin_2/replay', { forceEffect: 'neverCompleted' });
    expect(force.status).toBe(400);
    expect(await force.json()).toMatchObject({ error: { code: 'unknown_effect' } });
  });
});
