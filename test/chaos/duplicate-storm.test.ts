/**
 * Scenario 1, duplicate storm: one event delivered 100 times at once, spread over two receiver processes, each
 * delivery on its own TCP connection, with a worker running. Exactly one delivery is `accepted` (the other 99
 * `duplicate`), one row, one job, and its effects happen once: one account, one subscription, one email.
 */
import { createPool } from '@webhook-inbox/db';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { expect, it } from 'vitest';
import { post } from '../../apps/receiver/test/helpers.ts';
import { queueDrained } from '../../apps/worker/test/support/database.ts';
import { startSmtpSink } from '../../apps/worker/test/support/smtp-sink.ts';
import {
  chaosReceiverEnv,
  crashLines,
  killAll,
  report,
  startReceiver,
  startWorker,
  workerEnv,
  type SpawnedReceiver,
  type WorkerProcess,
} from './support/cluster.ts';
import { checkout, order, type ChaosEvent } from './support/events.ts';
import { duplicateEffects, installAudit, snapshot, sumEffects } from './support/invariants.ts';

const db = useTestDatabase();
const COPIES = 100;

it('100 simultaneous copies of one event over 2 receivers: one accepted, one row, one job, effects once', async () => {
  const pool = createPool({ connectionString: db.url, max: 4 });
  const smtp = await startSmtpSink();
  const processes: Array<WorkerProcess | SpawnedReceiver> = [];
  try {
    await installAudit(pool);
    const worker = await startWorker(workerEnv(db.url, smtp.url));
    processes.push(worker);
    const receivers = await Promise.all([
      startReceiver(chaosReceiverEnv(db.url)),
      startReceiver(chaosReceiverEnv(db.url)),
    ]);
    processes.push(...receivers);

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

    await waitFor(
      async () => (await snapshot(pool)).byStatus.processed === events.length && queueDrained(pool),
      { timeout: 60_000, message: 'both events processed' },
    );
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
    expect(after.keysWithSeveralJobs).toBe(0);
    expect(after.effects).toEqual(expected);
    expect(after.unfinishedEffects).toBe(0);
    expect(smtp.messages).toHaveLength(1);
    for (const p of processes) expect(crashLines(p.output())).toEqual([]);
  } finally {
    await killAll(processes);
    await smtp.close();
    await pool.end();
  }
});
