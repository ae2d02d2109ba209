import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, send, sql, standardDelivery, type TestApp } from './helpers.ts';
import { shopifyDelivery, stripeDelivery, SW_NAME } from '@webhook-inbox/scenarios/receiver';

/**
 * The subject an event is about, read from its verified body by the receiver and stored with the event in the one
 * recording transaction (`webhook_events.subject`), and the event log's search over it (the admin API's `q`).
 */
const db = useTestDatabase();
const ADMIN = 'subject-test-admin-token-0123456789';
let t: TestApp;

async function subjectOf(provider: string, eventId: string): Promise<string[] | null> {
  const { rows } = await sql(
    db.url,
    'select subject from webhook_events where provider = $1 and event_id = $2',
    [provider, eventId],
  );
  return (rows[0] as { subject: string[] | null } | undefined)?.subject ?? null;
}

async function search(q: string): Promise<string[]> {
  const response = await t.app.request(`/admin/events?${new URLSearchParams({ q }).toString()}`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(response.status).toBe(200);
  const page = (await response.json()) as { events: Array<{ eventId: string; subject: string | null }> };
  return page.events.map((event) => event.eventId);
}

beforeAll(async () => {
  t = await createTestApp(db.url, { adminToken: ADMIN });
});
afterAll(async () => {
  await t?.close();
});

describe('the subject recorded at ingest', () => {
  const stripe = stripeDelivery({ id: 'evt_subject_1QxYz' });
  const shopify = shopifyDelivery({ eventId: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' });

  it("records a Stripe event's customer as sent and its email lower-cased", async () => {
    expect((await send(t.app, stripe)).status).toBe(200);
    expect(await subjectOf('stripe', stripe.key)).toEqual(['cus_IhGfebO16cMIGN', 'billz@supabase.io']);
  });

  it("records a Shopify event's shop, bare event id, order and customer, every digit kept", async () => {
    expect((await send(t.app, shopify)).status).toBe(200);
    expect(await subjectOf('shopify', shopify.key)).toEqual([
      'dev-shop.myshopify.com',
      'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      expect.any(String), // the webhook id, random per delivery
      '820982911946154508',
      'jon@example.com',
      '115310627314723954',
      'john@example.com',
    ]);
  });

  it('records none for a provider without subject paths; a duplicate changes nothing', async () => {
    const other = standardDelivery();
    expect((await send(t.app, other)).status).toBe(200);
    expect(await subjectOf(SW_NAME, other.key)).toBeNull();
    expect(await (await send(t.app, stripe)).json()).toMatchObject({ status: 'duplicate' });
    expect(await subjectOf('stripe', stripe.key)).toEqual(['cus_IhGfebO16cMIGN', 'billz@supabase.io']);
  });

  it('finds events by a subject value, an id prefix, and a Shopify bare event id (admin API q)', async () => {
    expect(await search('cus_IhGfebO16cMIGN')).toEqual([stripe.key]);
    expect(await search('BILLZ@supabase.io')).toEqual([stripe.key]);
    // A Stripe id is case-sensitive at Stripe: found as written only.
    expect(await search('cus_ihgfebo16cmign')).toEqual([]);
    expect(await search('evt_subject_1Q')).toEqual([stripe.key]);
    expect(await search('b54557e4-bdd9-4b37-8a5f-bf7d70bcd043')).toEqual([shopify.key]);
    expect(await search('dev-shop.myshopify.com')).toEqual([shopify.key]);
    // A LIKE wildcard is a character like any other.
    expect(await search('evt_%')).toEqual([]);
    expect(await search('nobody@example.com')).toEqual([]);
  });
});
