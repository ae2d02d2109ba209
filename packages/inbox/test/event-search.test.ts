/**
 * The event log's free-text search for an event id's start (the console's search box, `webhook-inbox events
 * --search`, the admin API's `q`), against PostgreSQL: case-insensitive for the providers whose modules declare
 * their event ids caseless (GitHub's delivery UUIDs), exact for every other provider.
 */
import { insertEvents, useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../src/event-store.ts';
import { countUpTo, type EventFilter } from '../src/sql/event-filter.ts';

const db = useTestDatabase();
let pool: pg.Pool;

const GITHUB_DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
const ACME_DELIVERY = '9F0E2D8B-7C6A-4F4E-8D2C-1B0A99887766';
const STRIPE_EVENT = 'evt_1QaBcDeFgHiJ';

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await insertEvents(
    pool,
    `insert into webhook_events (provider, event_id, type, status, received_at)
     select provider, id, 't', 'processed', now() from unnest($1::text[], $2::text[]) as e(provider, id)`,
    [
      ['github', 'github-acme', 'stripe'],
      [GITHUB_DELIVERY, ACME_DELIVERY, STRIPE_EVENT],
    ],
  );
});
afterAll(() => pool.end());

async function found(search: string, filter: EventFilter = {}): Promise<string[]> {
  const page = await listEvents(pool, { ...filter, search });
  const { rows } = await pool.query<{ n: number }>(countUpTo({ ...filter, search }, 100));
  expect(rows[0]?.n, `the count of ${search}`).toBe(page.events.length);
  return page.events.map((event) => `${event.provider}/${event.eventId}`).sort();
}

describe('the event-id search', () => {
  it("finds a GitHub delivery by its id's start in either case", async () => {
    for (const search of ['72d3162e', '72D3162E', '72D3162e-CC78']) {
      expect(await found(search), search).toEqual([`github/${GITHUB_DELIVERY}`]);
    }
  });

  it("finds a Stripe event by its id's exact start only: Stripe's ids compare with case", async () => {
    expect(await found('evt_1QaBc')).toEqual([`stripe/${STRIPE_EVENT}`]);
    expect(await found('evt_1qabc')).toEqual([]);
    expect(await found('EVT_1QABC')).toEqual([]);
  });

  it('matches the providers it is given without case, those only (a source named otherwise than its type)', async () => {
    expect(await found('9f0e2d8b')).toEqual([]);
    expect(await found('9f0e2d8b', { caselessIdProviders: ['github-acme'] })).toEqual([
      `github-acme/${ACME_DELIVERY}`,
    ]);
    expect(await found('72D3162E', { caselessIdProviders: ['github-acme'] })).toEqual([]);
    expect(await found('9F0E2D8B')).toEqual([`github-acme/${ACME_DELIVERY}`]);
  });
});
