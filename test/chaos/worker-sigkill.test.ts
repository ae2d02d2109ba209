/**
 * Scenario 2, worker SIGKILL chaos: two worker processes drain 2,000 mixed events while one of them is SIGKILLed
 * every ~150 processed events (about every second or two) and replaced at once. Every event ends processed;
 * each database effect ran exactly once (statement audit); every account got its welcome email, and a second
 * copy (same Message-ID) only where a kill fell between "accepted by SMTP" and "marked sent", the documented
 * at-least-once window: at most the sends one worker can have in flight, per kill.
 */
import { randomInt } from 'node:crypto';
import { createPool } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { queueDrained } from '../../apps/worker/test/support/database.ts';
import { startProducer } from '../../apps/worker/test/support/events.ts';
import { startSmtpSink } from '../../apps/worker/test/support/smtp-sink.ts';
import {
  CHAOS_QUEUE,
  crashLines,
  killAll,
  mapConcurrently,
  report,
  startWorker,
  workerEnv,
  type WorkerProcess,
} from './support/cluster.ts';
import { accountsOf, mixedEvents } from './support/events.ts';
import {
  duplicateEffects,
  installAudit,
  processedCount,
  snapshot,
  sumEffects,
} from './support/invariants.ts';

const db = useTestDatabase();

const EVENTS = 2_000;
const KILLS = 8;
const BATCH_SIZE = 20;
const CONCURRENCY = 2;

it('2 workers, one SIGKILLed every ~150 events during 2,000 events: all processed, database effects once', async () => {
  const pool = createPool({ connectionString: db.url, max: 6 });
  // A mail server that takes a few ms per message, so that kills land in the middle of sends too.
  const smtp = await startSmtpSink({ delayMs: () => randomInt(1, 6) });
  const all: WorkerProcess[] = [];
  const env = workerEnv(db.url, smtp.url, {
    WORKER_BATCH_SIZE: String(BATCH_SIZE),
    WORKER_CONCURRENCY: String(CONCURRENCY),
  });
  const producer = await startProducer(pool, db.url, CHAOS_QUEUE);
  try {
    await installAudit(pool);
    const events = mixedEvents(EVENTS);
    const live = await Promise.all([startWorker(env), startWorker(env)]);
    all.push(...live);

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
      const replacement = await startWorker(env);
      all.push(replacement);
      live.push(replacement);
    }
    expect((await loading).filter((outcome) => outcome !== 'accepted')).toEqual([]);

    await waitFor(async () => (await processedCount(pool)) === EVENTS && queueDrained(pool), {
      timeout: 120_000,
      interval: 200,
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
    expect(after.byStatus).toEqual({ processed: EVENTS });
    expect(after.keysWithSeveralJobs).toBe(0);
    expect(after.effects).toEqual(expected);
    expect(after.unfinishedEffects).toBe(0);
    // Every account its email, nobody else one; a duplicate is always the same Message-ID.
    expect(counts.size).toBe(accountsOf(events));
    // The at-least-once window: only sends accepted by SMTP and not yet marked when the kill hit.
    expect(smtp.duplicates()).toBeLessThanOrEqual(kills * BATCH_SIZE * CONCURRENCY);
    for (const worker of all) expect(crashLines(worker.output())).toEqual([]);
    // The survivors stop cleanly.
    for (const worker of live) worker.kill('SIGTERM');
    for (const worker of live) expect(await worker.exited).toBe(0);
  } finally {
    await killAll(all);
    await producer.stop();
    await smtp.close();
    await pool.end();
  }
});
