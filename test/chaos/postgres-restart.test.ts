/**
 * Scenario 4, PostgreSQL restarted under load. This file runs its own embedded PostgreSQL (a restart of the
 * shared test server would hit every other test), migrated like production. 16 Stripe-like senders deliver
 * fresh events without pause until the server is back (at least 400 events): the outage always meets
 * deliveries. The mail server holds every message until the database is down, so the worker has welcome emails
 * in flight (accepted, not yet marked sent) when the server is stopped; it is kept down until the receiver has
 * answered a good number of 503s, then started again on the same data directory and port. No
 * delivery that ran entirely while the database was down got a 2xx; every 2xx is in the database; the receiver,
 * never restarted, recovers by itself; every event ends accepted and processed once.
 *
 * The second test checks that the worker itself survived: "terminating connection due to administrator
 * command" (57P01) on a connection held checked out must reach an 'error' listener (createPool adds one to every
 * connection), never crash the process. Should it die anyway, the first test starts a replacement worker, as a
 * supervisor would, so that the rest is still checked.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  findFreePort,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
} from '@webhook-inbox/testing/embedded';
import { waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import {
  chaosReceiverEnv,
  deliverUntilAccepted,
  report,
  startStream,
  statusCounts,
  type Attempt,
} from './support/cluster.ts';
import { keysOf, mixedEventSource } from './support/events.ts';
import { duplicateEffects, missingKeys, snapshot, sumEffects } from './support/invariants.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, startScenario } from './support/scenario.ts';
import { getStatus } from '@webhook-inbox/scenarios/receiver';

const MIN_EVENTS = 400;
const SENDERS = 16;
const OUTAGE_JOB_TIMEOUT_SECONDS = 30;

/** How the first worker ended, if it did not survive the restart. */
let workerDeath: string | undefined;

it('PostgreSQL stopped and started under load: 503s while down, no 2xx, the receiver recovers by itself, all processed once', async () => {
  const options: EmbeddedPostgresOptions = {
    dataDir: path.join(
      os.tmpdir(),
      `webhook-inbox-chaos-pg-${process.pid}-${randomBytes(3).toString('hex')}`,
    ),
    port: await findFreePort(),
    // Kept across the restart; removed at the end of the test.
    persistent: true,
    unsafeFast: true,
    maxConnections: 100,
  };
  let server: EmbeddedPostgres | undefined = await startEmbeddedPostgres(options);
  const url = server.url();
  let databaseDown!: () => void;
  const down = new Promise<void>((resolve) => (databaseDown = resolve));
  const scenario = await startScenario({
    databaseUrl: url,
    migrate: true,
    poolSize: 2,
    // A mail server taking 150 ms per message, and holding every message until the database is down: the
    // worker has emails in flight when the database goes.
    smtpDelayMs: () => 150,
    smtpHold: () => down,
    afterStop: async () => {
      await server?.stop();
      await rm(options.dataDir, { recursive: true, force: true });
    },
  });
  const { pool, smtp } = scenario;
  try {
    // A job expiry longer than the outage: an email sent just before the database went away is marked done once
    // it is back (the mark is retried until shortly before the job expires) instead of being sent again.
    const env = scenario.workerEnv({ WORKER_JOB_TIMEOUT_SECONDS: String(OUTAGE_JOB_TIMEOUT_SECONDS) });
    const worker = await scenario.startWorker(env);
    // A 1 s database deadline: requests caught by the outage become 503s quickly.
    const receiver = await scenario.startReceiver(chaosReceiverEnv(url, { DATABASE_TIMEOUT_MS: '1000' }));

    const attempts: Attempt[] = [];
    const sending = startStream(
      mixedEventSource(),
      (event) =>
        deliverUntilAccepted(event.delivery, () => receiver.url, {
          deadlineMs: 120_000,
          maxBackoffMs: 250,
          onAttempt: (attempt) => attempts.push(attempt),
        }),
      { concurrency: SENDERS },
    );

    await waitFor(() => sending.finished() >= MIN_EVENTS / 4, {
      timeout: 60_000,
      message: `${MIN_EVENTS / 4} events accepted`,
    });
    // ...and an external effect (a welcome email) claimed and not yet marked: the mail server holds it.
    await waitFor(
      async () =>
        (
          await pool.query<{ n: number }>(
            `select count(*)::int as n from effect_runs where status = 'running'`,
          )
        ).rows[0]!.n > 0,
      { timeout: 30_000, interval: 10, message: 'a welcome email in flight' },
    );
    const stopping = Date.now();
    await server.stop();
    server = undefined;
    const downAt = Date.now();
    databaseDown();
    // Down until the receiver has refused a good number of deliveries (a condition, not a timer): the senders
    // are still delivering, each retrying its event until a 2xx.
    await waitFor(() => attempts.filter((a) => a.start >= downAt && a.status === 503).length >= 100, {
      timeout: 30_000,
      interval: 50,
      message: '100 deliveries refused (503) while the database is down',
    });
    const readyWhileDown = await getStatus(receiver.managementUrl, '/readyz');
    const healthyWhileDown = await getStatus(receiver.url, '/healthz');
    const upFrom = Date.now();
    server = await startEmbeddedPostgres(options);
    const up = Date.now();

    const outcomes = await sending.finish(MIN_EVENTS);
    const events = sending.items;
    // The worker should still be running. If it died anyway (the second test fails then), start another, as a
    // supervisor would, so that the rest is still checked.
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
      const lines = worker.output().split('\n');
      const at = lines.findIndex((line) => line.includes("Unhandled 'error' event"));
      workerDeath = `exit ${worker.child.exitCode ?? worker.child.signalCode}: ${
        at >= 0 ? lines.slice(at, at + 4).join(' | ') : lines.slice(-5).join(' | ')
      }`;
      await scenario.startWorker(env);
    }
    // A 2xx for a delivery that started after the server was gone and ended before it was back: impossible.
    const allAttempts = outcomes.flatMap((o) => o.attempts);
    const okWhileDown = allAttempts.filter((a) => a.status === 200 && a.start >= downAt && a.end <= upFrom);
    const downAttempts = allAttempts.filter((a) => a.start >= downAt && a.end <= upFrom);
    const acceptedKeys = keysOf(outcomes.filter((o) => o.outcome));
    const notDurable = await waitFor(() => missingKeys(pool, acceptedKeys), { timeout: 30_000 });
    await scenario.waitForProcessed(events.length, {
      timeout: 300_000,
      message: `all ${events.length} events processed after the restart`,
    });
    const after = await snapshot(pool);
    const expected = sumEffects(events);
    report('postgres-restart', {
      events: events.length,
      'downMs(stop..start)': upFrom - stopping,
      restartMs: up - upFrom,
      statusesWhileDown: statusCounts([{ delivery: events[0]!.delivery, attempts: downAttempts }]),
      '2xxWhileDown': okWhileDown.length,
      readyzWhileDown: readyWhileDown,
      healthzWhileDown: healthyWhileDown,
      statuses: statusCounts(outcomes),
      '2xx': acceptedKeys.length,
      workerSurvived: workerDeath === undefined,
      rows: after.rows,
      processed: after.byStatus.processed ?? 0,
      effects: after.effects,
      duplicates: duplicateEffects(after.effects, expected) + after.keysWithSeveralJobs,
      duplicateEmails: smtp.duplicates(),
      notDurable: notDurable.length,
      lost: events.length - (after.byStatus.processed ?? 0),
    });

    expect(okWhileDown).toEqual([]);
    expect(downAttempts.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    expect(readyWhileDown).toBe(503);
    expect(healthyWhileDown).toBe(200);
    expect(outcomes.filter((o) => !o.outcome).map((o) => o.delivery.key)).toEqual([]);
    expect(notDurable).toEqual([]);
    expect(after.rows).toBe(events.length);
    expectEachEventProcessedOnce(after, events, smtp);
    // An email accepted by SMTP while the database was down has its "sent" mark retried until the database is
    // back (the outage is far shorter than the job's expiry), so none is sent twice. The restart also ends the
    // sender's advisory lock on the account's key; its claim still holds the key, so the same customer's next
    // checkout, run meanwhile, waits for the mark instead of sending a second copy.
    expect(smtp.duplicates()).toBe(0);
    // The receiver recovered by itself: the same process, still running, no crash.
    expect(receiver.child.exitCode).toBeNull();
    expectNoCrashLines([receiver]);
    if (workerDeath)
      console.log(`chaos[postgres-restart] the worker died (see the next test): ${workerDeath}`);
  } finally {
    await scenario.stop();
  }
});

// createPool puts an 'error' listener on every connection, checked out or not: a terminated one never crashes it.
it('the worker survives a PostgreSQL restart by itself (no unhandled pg client error)', () => {
  expect(workerDeath).toBeUndefined();
});
