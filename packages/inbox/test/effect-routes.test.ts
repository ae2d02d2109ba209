import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_RETRIES } from './support/harness.ts';
import {
  loadEffectLookup,
  readAllEffectRoutes,
  readEffectRoutes,
  recordedEventTypes,
  recordEffectRoutes,
} from '../src/effect-routes.ts';
import { external } from '../src/effects/types.ts';
import { createInbox } from '../src/inbox.ts';

const db = useTestDatabase();
let pool: pg.Pool;

beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
});

describe('effect_routes', () => {
  it('is empty before a worker starts: replays then leave the choice to the worker', async () => {
    expect(await readEffectRoutes(pool)).toEqual([]);
    expect(await loadEffectLookup(pool)).toBeUndefined();
    expect(await recordedEventTypes(pool, 'stripe')).toEqual([]);
  });

  it("holds the effects of the worker that started last, each type's in the order they run", async () => {
    const first = createInbox()
      .on('stripe', ['invoice.paid', 'charge.refunded'], { recordPayment: () => {} })
      .on('stripe', 'charge.refunded', { notifyFinance: external({ run: () => {} }) })
      .on('shopify', 'orders/create', { saveOrder: () => {} });
    const worker = await first.start({ connectionString: db.url, queue: FAST_RETRIES });
    await worker.stop();

    expect(await readEffectRoutes(pool)).toEqual([
      { provider: 'shopify', eventType: 'orders/create', effect: 'saveOrder', kind: 'database', position: 0 },
      {
        provider: 'stripe',
        eventType: 'charge.refunded',
        effect: 'recordPayment',
        kind: 'database',
        position: 0,
      },
      {
        provider: 'stripe',
        eventType: 'charge.refunded',
        effect: 'notifyFinance',
        kind: 'external',
        position: 1,
      },
      {
        provider: 'stripe',
        eventType: 'invoice.paid',
        effect: 'recordPayment',
        kind: 'database',
        position: 0,
      },
    ]);
    const effectsFor = await loadEffectLookup(pool);
    expect(effectsFor?.('stripe', 'charge.refunded')).toEqual(['recordPayment', 'notifyFinance']);
    expect(effectsFor?.('stripe', 'customer.created')).toEqual([]);
    expect(await recordedEventTypes(pool, 'stripe')).toEqual(['charge.refunded', 'invoice.paid']);

    // A new version of the worker drops an effect and adds one: the record follows it.
    const second = createInbox().on('stripe', 'invoice.paid', {
      recordPayment: () => {},
      sendReceipt: () => {},
    });
    const next = await second.start({ connectionString: db.url, queue: FAST_RETRIES });
    await next.stop();
    expect((await loadEffectLookup(pool))?.('stripe', 'charge.refunded')).toEqual([]);
    expect(await recordedEventTypes(pool, 'stripe')).toEqual(['invoice.paid']);
    expect(second.effectRoutes()).toEqual(await readEffectRoutes(pool));
  });

  it('records from several processes at once without a conflict: one complete set wins', async () => {
    const sets = Array.from({ length: 8 }, (_, i) =>
      Array.from({ length: 20 }, (_, j) => ({
        provider: 'stripe',
        eventType: `type.${j}`,
        effect: `effect${i}`,
        kind: 'database' as const,
        position: 0,
      })),
    );
    await Promise.all(sets.map((set) => recordEffectRoutes(pool, set)));
    const rows = await readEffectRoutes(pool);
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((row) => row.effect)).size).toBe(1);
  });

  it("keeps each group's routes apart: a group replaces only its own, reconciliation sees every group's types", async () => {
    const route = (eventType: string, effect: string, position = 0) => ({
      provider: 'stripe',
      eventType,
      effect,
      kind: 'database' as const,
      position,
    });
    await recordEffectRoutes(pool, [route('invoice.paid', 'recordPayment')]);
    await recordEffectRoutes(pool, [route('charge.refunded', 'recordRefund')], 'billing');
    expect(await readEffectRoutes(pool)).toEqual([route('invoice.paid', 'recordPayment')]);
    expect(await readEffectRoutes(pool, 'billing')).toEqual([route('charge.refunded', 'recordRefund')]);
    expect((await loadEffectLookup(pool, 'billing'))?.('stripe', 'charge.refunded')).toEqual([
      'recordRefund',
    ]);
    expect(await loadEffectLookup(pool, 'nobody')).toBeUndefined();
    expect(await recordedEventTypes(pool, 'stripe')).toEqual(['charge.refunded', 'invoice.paid']);

    // The default group's next start leaves billing's routes alone.
    await recordEffectRoutes(pool, [
      route('invoice.paid', 'recordPayment'),
      route('invoice.paid', 'mail', 1),
    ]);
    expect(await readEffectRoutes(pool, 'billing')).toEqual([route('charge.refunded', 'recordRefund')]);
    expect((await readAllEffectRoutes(pool)).map((r) => r.consumerGroup)).toEqual([
      'billing',
      'default',
      'default',
    ]);
  });
});
