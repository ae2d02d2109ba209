/**
 * Scale-out: N=2 receiver processes and M=2 worker processes against one PostgreSQL, under a mixed load of
 * Stripe and Shopify events in which a third of the events are delivered two or three times, the copies at the
 * same moment to different receivers (as a provider's retries and a load balancer would make them). The
 * invariants hold across processes: one row and one job per event key, exactly one `accepted` per key, every
 * event processed, each database effect once, one welcome email per account.
 */
import { randomInt } from 'node:crypto';
import { useTestDatabase } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import {
  chaosReceiverEnv,
  deliverUntilAccepted,
  mapConcurrently,
  report,
  statusCounts,
} from './support/cluster.ts';
import { mixedEvents } from './support/events.ts';
import { duplicateEffects, snapshot, sumEffects } from './support/invariants.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, withScenario } from './support/scenario.ts';

const db = useTestDatabase();
const EVENTS = 1_000;
const RECEIVERS = 2;
const WORKERS = 2;

it(`${RECEIVERS} receivers x ${WORKERS} workers, ${EVENTS} events with concurrent duplicates: invariants hold`, async () => {
  await withScenario({ databaseUrl: db.url }, async (scenario) => {
    const { pool, smtp } = scenario;
    await Promise.all(Array.from({ length: WORKERS }, () => scenario.startWorker()));
    const receivers = await Promise.all(
      Array.from({ length: RECEIVERS }, () => scenario.startReceiver(chaosReceiverEnv(db.url))),
    );

    const events = mixedEvents(EVENTS);
    // Every third event goes out 2 or 3 times at once, the copies spread over the receivers.
    const copiesOf = events.map((_, i) => (i % 3 === 0 ? randomInt(2, 4) : 1));
    const started = Date.now();
    const outcomes = (
      await mapConcurrently(events, 12, (event, i) =>
        Promise.all(
          Array.from({ length: copiesOf[i]! }, (_, copy) =>
            deliverUntilAccepted(event.delivery, () => receivers[(i + copy) % RECEIVERS]!.url),
          ),
        ),
      )
    ).flat();
    const sendSeconds = (Date.now() - started) / 1000;

    await scenario.waitForProcessed(EVENTS, { timeout: 300_000, message: `all ${EVENTS} events processed` });
    const seconds = (Date.now() - started) / 1000;
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    const accepted = outcomes.filter((o) => o.outcome === 'accepted');
    report('scale-out', {
      receivers: RECEIVERS,
      workers: WORKERS,
      events: EVENTS,
      deliveries: outcomes.length,
      statuses: statusCounts(outcomes),
      accepted: accepted.length,
      duplicate: outcomes.filter((o) => o.outcome === 'duplicate').length,
      sendSeconds: sendSeconds.toFixed(1),
      seconds: seconds.toFixed(1),
      rows: after.rows,
      jobs: after.jobs,
      processed: after.byStatus.processed ?? 0,
      effects: after.effects,
      duplicates: duplicateEffects(after.effects, expected) + after.keysWithSeveralJobs + smtp.duplicates(),
      lost: EVENTS - (after.byStatus.processed ?? 0),
    });

    expect(outcomes.filter((o) => !o.outcome)).toEqual([]);
    // Exactly one `accepted` per key, whichever receiver answered it.
    expect(accepted).toHaveLength(EVENTS);
    expect(new Set(accepted.map((o) => o.delivery.key)).size).toBe(EVENTS);
    expect(after.rows).toBe(EVENTS);
    expect(after.jobs).toBe(EVENTS);
    expectEachEventProcessedOnce(after, events, smtp);
    expect(smtp.duplicates()).toBe(0);
    expectNoCrashLines(scenario.processes);
  });
});
