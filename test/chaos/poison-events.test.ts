/**
 * Scenario 8, poison events among good ones: 200 good events and 30 authentic events that can never succeed
 * (a Shopify order whose id is not a number, a checkout with a customer but no email, a subscription without a
 * customer), interleaved, through two receivers, with two workers. The good ones are processed, each effect
 * once; the poison ones end `dead` with a `last_error` saying why, after one attempt (the failure is permanent),
 * without holding up the rest.
 *
 * Alerts: a local HTTP server is given to the workers as ALERT_WEBHOOK_URL; the last test checks what reached it.
 */
import { useTestDatabase, waitFor, startAlertSink, fixtureText } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import {
  chaosReceiverEnv,
  deliverUntilAccepted,
  mapConcurrently,
  report,
  waitForOrExplain,
} from './support/cluster.ts';
import { accountsOf, mixedEvents, type ChaosEvent } from './support/events.ts';
import { duplicateEffects, snapshot, sumEffects } from './support/invariants.ts';
import { expectNoCrashLines, startScenario } from './support/scenario.ts';
import { shopifyDelivery, stripeDelivery } from '@webhook-inbox/scenarios/receiver';
import { queueDrained, checkoutEvent, subscriptionEvent } from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();
const GOOD = 200;
const POISON = 30;
/** A word of each kind's error, as its alert says it. */
const ALERTED = ['schema', 'email', 'customer'];

interface Poison {
  event: ChaosEvent;
  /** What its last_error must say. */
  error: RegExp;
}

/** An authentic event that no retry can fix, of one of three kinds. */
function poison(i: number): Poison {
  switch (i % 3) {
    case 0: {
      // A valid order to the receiver (its id is one), not to the effect's schema (the customer's id is text).
      const body = fixtureText('shopify/orders_create.json').replace(
        /"customer":\{"id":\d+/,
        '"customer":{"id":"not-a-number"',
      );
      const delivery = shopifyDelivery({ eventId: `poison-order-${i}`, body });
      return {
        event: {
          delivery,
          raw: { provider: 'shopify', eventId: delivery.key, type: 'orders/create', payloadText: body },
          effects: {},
        },
        error: /payload does not match its schema/,
      };
    }
    case 1: {
      const raw = checkoutEvent({ id: `evt_poison_co_${i}`, customer: `cus_poison_${i}`, email: '' });
      return {
        event: { raw, delivery: stripeDelivery({ id: raw.eventId, body: raw.payloadText }), effects: {} },
        error: /no customer email/,
      };
    }
    default: {
      const raw = subscriptionEvent('customer.subscription.updated', {
        id: `evt_poison_su_${i}`,
        subscription: `sub_poison_${i}`,
        created: 1_700_000_000 + i,
      });
      const payload = JSON.parse(raw.payloadText) as { data: { object: { customer: unknown } } };
      payload.data.object.customer = null;
      const body = JSON.stringify(payload);
      return {
        event: {
          raw: { ...raw, payloadText: body },
          delivery: stripeDelivery({ id: raw.eventId, body }),
          effects: {},
        },
        error: /no customer/,
      };
    }
  }
}

let alertsReceived: string[] = [];
let deadKeys: string[] = [];

describe('poison events among good ones', () => {
  it(`${POISON} poison events among ${GOOD} good ones: good processed once, poison dead with last_error`, async () => {
    const scenario = await startScenario({ databaseUrl: db.url });
    const { pool, smtp, processes } = scenario;
    const alerts = await startAlertSink();
    try {
      // No worker dies here: a long expiry, so that a batch slowed down by a busy machine is not retried (the
      // poison events' attempt counts are checked).
      const env = scenario.workerEnv({ ALERT_WEBHOOK_URL: alerts.url, WORKER_JOB_TIMEOUT_SECONDS: '120' });
      await Promise.all([scenario.startWorker(env), scenario.startWorker(env)]);
      const receivers = await Promise.all([
        scenario.startReceiver(chaosReceiverEnv(db.url)),
        scenario.startReceiver(chaosReceiverEnv(db.url)),
      ]);

      const good = mixedEvents(GOOD);
      const poisons = Array.from({ length: POISON }, (_, i) => poison(i));
      // Interleaved: one poison event every ~7 good ones.
      const all: ChaosEvent[] = [...good];
      poisons.forEach((p, i) => all.splice(Math.floor(((i + 1) * all.length) / (POISON + 1)), 0, p.event));
      const outcomes = await mapConcurrently(all, 16, (event, i) =>
        deliverUntilAccepted(event.delivery, () => receivers[i % 2]!.url),
      );
      expect(outcomes.filter((o) => o.outcome !== 'accepted').map((o) => o.attempts)).toEqual([]);

      await waitForOrExplain(
        async () => {
          const s = await snapshot(pool);
          return s.byStatus.processed === GOOD && s.byStatus.dead === POISON && queueDrained(pool);
        },
        { timeout: 300_000, interval: 200, message: 'good events processed, poison events dead' },
        () => snapshot(pool),
        processes,
      );
      // The dead-letter handler has run too: nothing left in either queue.
      await waitFor(
        async () =>
          (
            await pool.query<{ n: number }>(
              `select count(*)::int as n from pgboss.job where name like 'webhook-events%' and state < 'completed'`,
            )
          ).rows[0]!.n === 0,
        { timeout: 30_000, message: 'both queues drained' },
      );
      // Alerts go out from an in-memory queue after the event is dead: the first of each kind has arrived before
      // the workers are stopped (the last test checks what they say).
      await waitFor(() => ALERTED.every((why) => alerts.bodies.join('\n').includes(why)), {
        timeout: 30_000,
        message: 'an alert for each kind of poison event',
      });
      const { rows: dead } = await pool.query<{
        event_id: string;
        attempts: number;
        last_error: string | null;
      }>(`select event_id, attempts, last_error from webhook_events where status = 'dead' order by event_id`);
      deadKeys = dead.map((row) => row.event_id);
      const after = await snapshot(pool);
      const expected = sumEffects(good);
      report('poison-events', {
        good: GOOD,
        poison: POISON,
        processed: after.byStatus.processed ?? 0,
        dead: after.byStatus.dead ?? 0,
        'dead attempts': [...new Set(dead.map((row) => row.attempts))],
        effects: after.effects,
        duplicates: duplicateEffects(after.effects, expected) + after.keysWithSeveralJobs,
        emails: smtp.messages.length,
        alertsReceived: alerts.bodies.length,
        lost: GOOD - (after.byStatus.processed ?? 0),
      });

      expect(after.byStatus).toEqual({ processed: GOOD, dead: POISON });
      expect(after.effects).toEqual(expected);
      expect(smtp.counts().size).toBe(accountsOf(good));
      expect(smtp.duplicates()).toBe(0);
      const byKey = new Map(dead.map((row) => [row.event_id, row]));
      for (const { event, error } of poisons) {
        const row = byKey.get(event.delivery.key);
        expect(row, event.delivery.key).toBeDefined();
        expect(row!.last_error).toMatch(error);
        // Permanent: no retry was spent on it.
        expect(row!.attempts).toBe(1);
      }
      expectNoCrashLines(processes);
    } finally {
      alertsReceived = alerts.bodies;
      await scenario.stop();
      await alerts.close();
    }
  });

  // Repeats of one error fingerprint are grouped (one alert, then one summary with a count when the window
  // closes), so each kind of poison is alerted at least once, naming a dead event and how to replay it.
  it('dead events are alerted to ALERT_WEBHOOK_URL, grouped by error', () => {
    expect(deadKeys).toHaveLength(POISON);
    const text = alertsReceived.join('\n');
    for (const why of ALERTED) expect(text).toContain(why);
    expect(deadKeys.some((key) => text.includes(key))).toBe(true);
    expect(text).toContain('npx webhook-inbox replay');
  });
});
