/**
 * Scenario 2, worker SIGKILL chaos: two worker processes drain mixed events while one of them is SIGKILLed every
 * ~150 processed events (about every second or two) and replaced at once, 8 times. Events keep arriving until
 * the last kill (a few hundred ahead of the workers, 2,000 at least), so every kill lands on workers with work
 * to do, however fast they are. Every event ends processed;
 * each database effect ran exactly once (statement audit); every account got its welcome email, and a second
 * copy (same Message-ID) only where a kill fell between "accepted by SMTP" and "marked sent", the documented
 * at-least-once window: at most the sends one worker can have in flight, per kill.
 */
import { randomInt } from 'node:crypto';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { CHAOS_QUEUE, report, startStream, type WorkerProcess } from './support/cluster.ts';
import { mixedEventSource } from './support/events.ts';
import { duplicateEffects, processedCount, snapshot, sumEffects } from './support/invariants.ts';
import {
  expectCleanStop,
  expectEachEventProcessedOnce,
  expectNoCrashLines,
  withScenario,
} from './support/scenario.ts';

const db = useTestDatabase();

const MIN_EVENTS = 2_000;
const KILLS = 8;
/** How far the producer stays ahead of the workers: events queued and not yet processed. */
const BACKLOG = 300;
const BATCH_SIZE = 20;
const CONCURRENCY = 2;

it('2 workers, one SIGKILLed every ~150 events, 8 times, 2,000+ events: all processed, database effects once', async () => {
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
    const live: WorkerProcess[] = await Promise.all([scenario.startWorker(env), scenario.startWorker(env)]);

    const started = Date.now();
    // The events arrive while the workers work (and die): 50 at a time, as the receiver would record them, until
    // the last kill.
    const loading = startStream(mixedEventSource(), (event) => producer.send(event.raw), {
      concurrency: 50,
      backlog: { limit: BACKLOG, done: () => processedCount(pool) },
    });

    let kills = 0;
    let mark = 0;
    while (kills < KILLS) {
      // Kill on progress, not on a timer: after another ~150 events (randomised), the longest-lived worker.
      mark += randomInt(100, 200);
      await waitFor(async () => (await processedCount(pool)) >= mark, {
        timeout: 120_000,
        interval: 50,
        message: `${mark} events processed before kill ${kills + 1}`,
      });
      const victim = live.shift()!;
      victim.kill('SIGKILL');
      expect(await victim.exited).toBe('SIGKILL');
      kills++;
      live.push(await scenario.startWorker(env));
    }
    expect((await loading.finish(MIN_EVENTS)).filter((outcome) => outcome !== 'accepted')).toEqual([]);
    const events = loading.items;

    await scenario.waitForProcessed(events.length, {
      timeout: 300_000,
      message: `all ${events.length} events processed after ${kills} kills`,
    });
    const seconds = (Date.now() - started) / 1000;
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    const counts = smtp.counts();
    report('worker-sigkill', {
      events: events.length,
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
      lost: events.length - (after.byStatus.processed ?? 0),
    });

    expect(after.rows).toBe(events.length);
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
