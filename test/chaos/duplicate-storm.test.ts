/**
 * Scenario 1, duplicate storm: one event delivered 100 times at once, spread over two receiver processes, each
 * delivery on its own TCP connection, with a worker running. Exactly one delivery is `accepted` (the other 99
 * `duplicate`), one row, one job, and its effects happen once: one account, one subscription, one email.
 */
import { useTestDatabase } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { chaosReceiverEnv, report } from './support/cluster.ts';
import { checkout, order, type ChaosEvent } from './support/events.ts';
import { duplicateEffects, snapshot, sumEffects } from './support/invariants.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, withScenario } from './support/scenario.ts';
import { post } from '@webhook-inbox/scenarios/receiver';

const db = useTestDatabase();
const COPIES = 100;

it('100 simultaneous copies of one event over 2 receivers: one accepted, one row, one job, effects once', async () => {
  await withScenario({ databaseUrl: db.url }, async (scenario) => {
    const { pool, smtp } = scenario;
    await scenario.startWorker();
    const receivers = await Promise.all([
      scenario.startReceiver(chaosReceiverEnv(db.url)),
      scenario.startReceiver(chaosReceiverEnv(db.url)),
    ]);

    const events: ChaosEvent[] = [checkout('storm', 0, 'cus_storm', true), order('storm', 1)];
    for (const event of events) {
      const answers = await Promise.all(
        Array.from({ length: COPIES }, (_, i) => post(receivers[i % 2]!.url, event.delivery)),
      );
      const statuses = answers.map((a) => a.status);
      const outcomes = answers.map((a) => (JSON.parse(a.body) as { status?: string }).status);
      const accepted = outcomes.filter((o) => o === 'accepted').length;
      const duplicates = outcomes.filter((o) => o === 'duplicate').length;
      report('duplicate-storm', {
        provider: event.delivery.provider,
        sent: COPIES,
        '2xx': statuses.filter((s) => s === 200).length,
        accepted,
        duplicate: duplicates,
      });
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(accepted).toBe(1);
      expect(duplicates).toBe(COPIES - 1);
    }

    await scenario.waitForProcessed(events.length, { timeout: 120_000, message: 'both events processed' });
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    report('duplicate-storm', {
      rows: after.rows,
      jobs: after.jobs,
      effects: after.effects,
      expected,
      emails: smtp.messages.length,
      duplicates: duplicateEffects(after.effects, expected) + smtp.duplicates(),
      lost: events.length - (after.byStatus.processed ?? 0),
    });
    expect(after.rows).toBe(events.length);
    expect(after.jobs).toBe(events.length);
    expectEachEventProcessedOnce(after, events, smtp);
    expect(smtp.messages).toHaveLength(1);
    expectNoCrashLines(scenario.processes);
  });
});
