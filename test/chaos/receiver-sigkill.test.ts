/**
 * Scenario 3, receiver SIGKILL under load: 24 concurrent senders deliver fresh events the way Stripe does (every
 * non-2xx answer and every connection error is retried) while the receiver process is SIGKILLed four times and
 * restarted; they keep starting new events until the last kill (600 events at least), so every kill finds
 * deliveries in progress. Every event that got a 2xx is in the database (an answer is only given after the commit), every
 * event is eventually accepted, and nothing is recorded or processed twice. A delivery committed by a receiver
 * that died before answering is retried by the sender and answered `duplicate`: that count is printed.
 */
import { randomInt } from 'node:crypto';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import {
  chaosReceiverEnv,
  deliverUntilAccepted,
  report,
  startStream,
  statusCounts,
} from './support/cluster.ts';
import { keysOf, mixedEventSource, type ChaosEvent } from './support/events.ts';
import { duplicateEffects, missingKeys, snapshot, sumEffects } from './support/invariants.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, withScenario } from './support/scenario.ts';

const db = useTestDatabase();

const MIN_EVENTS = 600;
const KILLS = 4;
/** Events acknowledged between two kills (about). */
const BETWEEN_KILLS = Math.floor(MIN_EVENTS / (KILLS + 1));
const SENDERS = 24;

it('receiver SIGKILLed 4 times under a retrying sender: every 2xx durable, all accepted once', async () => {
  await withScenario({ databaseUrl: db.url }, async (scenario) => {
    const { pool, smtp } = scenario;
    await scenario.startWorker();
    const env = chaosReceiverEnv(db.url);
    let receiver = await scenario.startReceiver(env);
    let target = receiver.url;

    const acknowledged: ChaosEvent[] = [];
    const sending = startStream(
      mixedEventSource(),
      async (event) => {
        const outcome = await deliverUntilAccepted(event.delivery, () => target, { deadlineMs: 120_000 });
        if (outcome.outcome) acknowledged.push(event);
        return outcome;
      },
      { concurrency: SENDERS },
    );

    const started = Date.now();
    let kills = 0;
    const notDurableAtKill: string[] = [];
    for (let k = 1; k <= KILLS; k++) {
      // On progress, with jitter: the receiver dies with requests in flight.
      const mark = k * BETWEEN_KILLS + randomInt(-20, 20);
      await waitFor(() => acknowledged.length >= mark, {
        timeout: 120_000,
        message: `${mark} events acknowledged`,
      });
      receiver.child.kill('SIGKILL');
      const acknowledgedBeforeKill = keysOf(acknowledged);
      expect((await receiver.exited).signal).toBe('SIGKILL');
      kills++;
      // Everything acknowledged before the kill is in the database, before any sender could retry it.
      notDurableAtKill.push(...(await missingKeys(pool, acknowledgedBeforeKill)));
      receiver = await scenario.startReceiver(env);
      target = receiver.url;
    }
    const outcomes = await sending.finish(MIN_EVENTS);
    const events = sending.items;
    const seconds = (Date.now() - started) / 1000;

    const acceptedKeys = keysOf(outcomes.filter((o) => o.outcome));
    const notDurable = await missingKeys(pool, acceptedKeys);
    await scenario.waitForProcessed(events.length, {
      timeout: 300_000,
      message: `all ${events.length} events processed`,
    });
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    const answered = (what: string) => outcomes.filter((o) => o.outcome === what).length;
    report('receiver-sigkill', {
      events: events.length,
      kills,
      seconds: seconds.toFixed(1),
      attempts: outcomes.reduce((n, o) => n + o.attempts.length, 0),
      statuses: statusCounts(outcomes),
      '2xx': acceptedKeys.length,
      accepted: answered('accepted'),
      'duplicate(committed, answer lost)': answered('duplicate'),
      rows: after.rows,
      processed: after.byStatus.processed ?? 0,
      effects: after.effects,
      duplicates: duplicateEffects(after.effects, expected) + after.keysWithSeveralJobs + smtp.duplicates(),
      notDurable: notDurable.length + notDurableAtKill.length,
      lost: events.length - acceptedKeys.length,
    });

    expect(outcomes.filter((o) => !o.outcome).map((o) => o.delivery.key)).toEqual([]);
    expect(notDurableAtKill).toEqual([]);
    expect(notDurable).toEqual([]);
    expect(after.rows).toBe(events.length);
    expect(after.jobs).toBe(events.length);
    expectEachEventProcessedOnce(after, events, smtp);
    expect(smtp.duplicates()).toBe(0);
    // Only 200s, the 503s of a dying receiver, and connection errors (0) were ever seen.
    expect(Object.keys(statusCounts(outcomes)).filter((s) => !['0', '200', '503'].includes(s))).toEqual([]);
    expectNoCrashLines(scenario.processes);
  });
});
