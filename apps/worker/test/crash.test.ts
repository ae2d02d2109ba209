/**
 * The worker process is SIGKILLed at each step boundary of each checkout effect (`support/crashing-worker.ts`:
 * the real worker with the effect wrapped and its outcomes observed), then a fresh worker finishes the job. For
 * every point: the event is processed, each database effect ran exactly once (counted by a statement trigger in
 * the test's database), and the welcome email arrived exactly once, except when the kill falls between the SMTP
 * server accepting it and the ledger marking it: then exactly twice, with the same Message-ID.
 */
import { createPool } from '@webhook-inbox/db';
import { createTestDatabase, waitFor } from '@webhook-inbox/testing';
import { describe, expect, it } from 'vitest';
import { CRASH_MARKER, CRASHING_WORKER_ENTRY, type CrashPoint } from './support/crash-points.ts';
import { WORKER_ENTRY } from './support/entry.ts';
import { startSmtpSink } from '@webhook-inbox/testing/smtp';
import {
  auditCounts,
  count,
  eventStatus,
  installEffectAudit,
  queueDrained,
  checkoutEvent,
  queueEnv,
  randomId,
  startProducer,
  spawnWorker,
} from '@webhook-inbox/scenarios/worker';

const STEPS = ['before-effect', 'after-effect-before-commit', 'after-commit'] as const satisfies CrashPoint[];
const EFFECTS = ['provisionAccount', 'sendWelcomeEmail', 'recordCheckoutSubscription'] as const;

/** `at`: the crashing worker's argument, `<point>:<effect>`, or a point that is not an effect's. */
const cases: Array<{ at: `${CrashPoint}:${string}` | CrashPoint; emails: number }> = [
  ...STEPS.flatMap((step) =>
    EFFECTS.map((effect) => ({
      at: `${step}:${effect}` as const,
      // The one unavoidable duplicate: the message was accepted, the process died before marking it sent.
      emails: step === 'after-effect-before-commit' && effect === 'sendWelcomeEmail' ? 2 : 1,
    })),
  ),
  // Every effect committed and the event settled `processed`; the job is not completed.
  { at: 'after-settle-before-complete', emails: 1 },
];

/** A counting semaphore, so `it.concurrent` runs at most `size` cases at once. */
function semaphore(size: number) {
  let free = size;
  const waiting: Array<() => void> = [];
  return {
    async acquire(): Promise<Disposable> {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      return { [Symbol.dispose]: () => (waiting.length > 0 ? waiting.shift()?.() : free++) };
    },
  };
}
const SLOTS = 3;
const slots = semaphore(SLOTS);
/** One case's bound (two worker starts, a job expiry, the retry), on a loaded two-core machine. */
const CASE_MS = 90_000;

describe('SIGKILL at every step boundary', () => {
  const results: string[] = [];

  it.concurrent.each(cases)(
    'killed at $at: nothing lost, no duplicate database effect, $emails email(s)',
    async ({ at, emails }) => {
      // Two worker processes per case: a few cases at a time, not all of them on a two-core machine.
      using _slot = await slots.acquire();
      const database = await createTestDatabase();
      const pool = createPool({ connectionString: database.url, max: 3 });
      const smtp = await startSmtpSink();
      const producer = await startProducer(pool, database.url);
      const env = {
        DATABASE_URL: database.url,
        SMTP_URL: smtp.url,
        WORKER_POLL_SECONDS: '0.5',
        WORKER_SUPERVISE_SECONDS: '1',
        ...queueEnv(),
      };
      try {
        await installEffectAudit(pool);
        const event = checkoutEvent({ customer: randomId('cus'), subscription: randomId('sub') });
        await producer.send(event);

        const doomed = spawnWorker(env, { entry: CRASHING_WORKER_ENTRY, args: [at] });
        expect(await doomed.exited, doomed.output()).toBe('SIGKILL');
        expect(doomed.output()).toContain(CRASH_MARKER);

        const survivor = spawnWorker(env, { entry: WORKER_ENTRY });
        try {
          // The recovery's deadline starts once the survivor runs: a process start on a loaded machine is no
          // part of what is measured.
          await waitFor(() => survivor.output().includes('"msg":"worker started"'), {
            timeout: 120_000,
            interval: 100,
            message: 'the survivor started',
          });
          await waitFor(
            async () => (await eventStatus(pool, event.eventId)) === 'processed' && queueDrained(pool),
            {
              timeout: 60_000,
              message: `event processed after the crash (${at})`,
            },
          );
        } finally {
          survivor.kill('SIGTERM');
          await survivor.exited;
        }

        // Every database effect committed exactly once: one INSERT statement on each table.
        expect(await auditCounts(pool)).toEqual({ accounts: 1, subscriptions: 1 });
        expect(await count(pool, 'select count(*)::int as n from accounts')).toBe(1);
        const { rows } = await pool.query<{ effect: string; status: string }>(
          'select effect, status from effect_runs where event_id = $1 order by effect',
          [event.eventId],
        );
        expect(rows.map((r) => `${r.effect}:${r.status}`)).toEqual([
          'provisionAccount:completed',
          'recordCheckoutSubscription:completed',
          'sendWelcomeEmail:completed',
        ]);
        // Emails: always the same Message-ID; a second copy only at the unavoidable point.
        expect(smtp.counts().size).toBe(1);
        expect(smtp.messages).toHaveLength(emails);
        results.push(`${at} -> emails ${smtp.messages.length}, duplicates ${smtp.duplicates()}`);
      } finally {
        await producer.stop();
        await smtp.close();
        await pool.end();
        await database.drop();
      }
    },
    // A case's time counts from when it is queued: it may wait for its slot behind the cases ahead of it.
    CASE_MS * Math.ceil(cases.length / SLOTS),
  );

  it('reports the duplicate emails per crash point', () => {
    // Printed for the record: zero everywhere but after-effect-before-commit:sendWelcomeEmail.
    console.log(`crash points:\n  ${results.sort().join('\n  ')}`);
    expect(results).toHaveLength(cases.length);
  });
});
