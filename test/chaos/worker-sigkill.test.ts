/**
 * Scenario 2, worker SIGKILL chaos: two worker processes drain 2,000 mixed events while one of them is SIGKILLed
 * every ~150 processed events (about every second or two) and replaced at once. Every event ends processed;
 * each database effect ran exactly once (statement audit); every account got its welcome email, and a second
 * copy (same Message-ID) only where a kill fell between "accepted by SMTP" and "marked sent", the documented
 * at-least-once window: at most the sends one worker can have in flight, per kill.
 */
import { randomInt } from 'node:crypto';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { CHAOS_QUEUE, mapConcurrently, report, type WorkerProcess } from './support/cluster.ts';
import { mixedEvents } from './support/events.ts';
import { duplicateEffects, processedCount, snapshot, sumEffects } from './support/invariants.ts';
import {
  expectCleanStop,
  expectEachEventProcessedOnce,
  expectNoCrashLines,
  withScenario,
} from './support/scenario.ts';

const db = useTestDatabase();

const EVENTS = 2_000;
const KILLS = 8;
const BATCH_SIZE = 20;
const CONCURRENCY = 2;

it('2 workers, one SIGKILLed every ~150 events during 2,000 events: all processed, database effects once', async () => {
  const options = {
    databaseUrl: db.url,
    poolSize: 6,
    // A mail server that takes a few ms per message, so that kills land in the middle of sends too.
    smtpDelayMs: () => randomInt(1, 6),
    producerQueue: CHAOS_QUEUE,
  };
  await withScenario(options, async (scenario) => {
    const { pool, smtp, producer } = scenario;
    const env = scenario.workerEnv({
      WORKER_BATCH_SIZE: String(BATCH_SIZE),
      WORKER_CONCURRENCY: String(CONCURRENCY),
    });
    const events = mixedEvents(EVENTS);
    const live: WorkerProcess[] = await Promise.all([scenario.startWorker(env), scenario.startWorker(env)]);

    const started = Date.now();
    // The events arrive while the workers work (and die): 50 at a time, as the receiver would record them.
    const loading = mapConcurrently(events, 50, (event) => producer.send(event.raw));

    let kills = 0;
    let mark = 0;
    while (kills < KILLS) {
      // Kill on progress, not on a timer: after another ~150 events (randomised), the longest-lived worker.
      mark += randomInt(100, 200);
      const target = Math.min(mark, EVENTS);
      await waitFor(async () => (await processedCount(pool)) >= target, {
        timeout: 60_000,
        interval: 50,
        message: `${target} events processed before kill ${kills + 1}`,
      });
      if (target >= EVENTS) break;
      const victim = live.shift()!;
      victim.kill('SIGKILL');
      expect(await victim.exited).toBe('SIGKILL');
      kills++;
      live.push(await scenario.startWorker(env));
    }
    expect((await loading).filter((outcome) => outcome !== 'accepted')).toEqual([]);

    await scenario.waitForProcessed(EVENTS, {
      timeout: 120_000,
      message: `all ${EVENTS} events processed after ${kills} kills`,
    });
    const seconds = (Date.now() - started) / 1000;
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    const counts = smtp.counts();
    report('worker-sigkill', {
      events: EVENTS,
      kills,
      seconds: seconds.toFixed(1),
      rows: after.rows,
      processed: after.byStatus.processed ?? 0,
      effects: after.effects,
      expected,
      duplicateDbEffects: duplicateEffects(after.effects, expected),
      emails: smtp.messages.length,
      accounts: counts.size,
      duplicateEmails: smtp.duplicates(),
      lost: EVENTS - (after.byStatus.processed ?? 0),
    });

    expect(after.rows).toBe(EVENTS);
    // All processed, database effects once; every account its email, nobody else one (a duplicate is always the
    // same Message-ID).
    expectEachEventProcessedOnce(after, events, smtp);
    // The at-least-once window: only sends accepted by SMTP and not yet marked when the kill hit.
    expect(smtp.duplicates()).toBeLessThanOrEqual(kills * BATCH_SIZE * CONCURRENCY);
    expectNoCrashLines(scenario.processes);
    // The survivors stop cleanly.
    await expectCleanStop(live);
  });
});
