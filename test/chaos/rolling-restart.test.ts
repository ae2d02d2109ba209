/**
 * Scenario 7, rolling restart: 500 checkouts (half queued before each restart), two workers busy with them (each
 * sends a welcome email to a mail server taking 100-200 ms per message, so effects are in flight all along); each
 * worker in turn gets SIGTERM, must exit 0 after finishing what it was running, and is replaced. Afterwards nothing is left `active` in pgboss.job, every event is processed,
 * each database effect ran once and no email went twice (a graceful stop abandons nothing).
 */
import { randomInt } from 'node:crypto';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { CHAOS_QUEUE, mapConcurrently, report, type WorkerProcess } from './support/cluster.ts';
import { checkout } from './support/events.ts';
import { duplicateEffects, snapshot, sumEffects } from './support/invariants.ts';
import {
  expectCleanStop,
  expectEachEventProcessedOnce,
  expectNoCrashLines,
  withScenario,
} from './support/scenario.ts';

const db = useTestDatabase();
const EVENTS = 500;

it('SIGTERM to each worker in turn with 500 jobs in flight: exit 0, nothing left active, all processed once', async () => {
  const options = {
    databaseUrl: db.url,
    // 100-200 ms per message: the workers stay busy for several seconds, so each SIGTERM lands mid-work.
    smtpDelayMs: () => randomInt(100, 200),
    producerQueue: CHAOS_QUEUE,
  };
  await withScenario(options, async (scenario) => {
    const { pool, smtp, producer } = scenario;
    const live: WorkerProcess[] = await Promise.all([scenario.startWorker(), scenario.startWorker()]);
    // Checkouts of 500 different customers: each sends a welcome email, so every event takes a while. Half
    // are queued before the first restart, half before the second: each SIGTERM lands in the middle of work.
    const events = Array.from({ length: EVENTS }, (_, i) =>
      checkout('roll', i, `cus_roll_${i}`, i % 4 === 0),
    );
    const halves = [events.slice(0, EVENTS / 2), events.slice(EVENTS / 2)];
    const send = async (batch: typeof events) =>
      expect(
        (await mapConcurrently(batch, 50, (event) => producer.send(event.raw))).filter(
          (o) => o !== 'accepted',
        ),
      ).toEqual([]);

    const restarts: Array<{ exit: NodeJS.Signals | number; ms: number; activeJobsBefore: number }> = [];
    for (let i = 0; i < 2; i++) {
      await send(halves[i]!);
      const activeJobsBefore = await waitFor(async () => (await snapshot(pool)).activeJobs || undefined, {
        timeout: 60_000,
        interval: 10,
        message: `jobs in flight at restart ${i + 1}`,
      });
      const old = live.shift()!;
      const t0 = Date.now();
      old.kill('SIGTERM');
      const exit = await old.exited;
      restarts.push({ exit, ms: Date.now() - t0, activeJobsBefore });
      live.push(await scenario.startWorker());
    }

    await scenario.waitForProcessed(EVENTS, { timeout: 300_000, message: `all ${EVENTS} events processed` });
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    const { rows } = await pool.query<{ n: number }>(
      'select count(*)::int as n from webhook_events where attempts > 1',
    );
    report('rolling-restart', {
      events: EVENTS,
      restarts: restarts.map((r) => `exit ${r.exit} in ${r.ms} ms with ${r.activeJobsBefore} jobs active`),
      activeAfter: after.activeJobs,
      processed: after.byStatus.processed ?? 0,
      'events attempted twice': rows[0]?.n,
      effects: after.effects,
      duplicates: duplicateEffects(after.effects, expected) + after.keysWithSeveralJobs,
      duplicateEmails: smtp.duplicates(),
      lost: EVENTS - (after.byStatus.processed ?? 0),
    });
    expect(restarts.map((r) => r.exit)).toEqual([0, 0]);
    expect(after.activeJobs).toBe(0);
    expect(after.pendingJobs).toBe(0);
    expectEachEventProcessedOnce(after, events, smtp);
    expect(smtp.duplicates()).toBe(0);
    expectNoCrashLines(scenario.processes);
    await expectCleanStop(live);
  });
});
