/**
 * The failover scenario, run with synchronous or asynchronous replication (one file each). A primary and its
 * streaming replica (support/replication.ts); the receiver and a worker reach them through one stable address;
 * 16 Stripe-like senders deliver without pause. Once the load is running and the replica has caught up, the
 * replication link stalls (replication lag, held as long as the scenario needs) until 20 deliveries have been
 * answered since; then the primary crashes, and once the receiver has refused deliveries for want of it, the
 * replica is promoted and the address moves to it. Neither process is restarted.
 *
 * Synchronous: a commit waits for the replica, so nothing is acknowledged while the link is stalled (the
 * receiver answers 503), and nothing acknowledged is lost. Asynchronous: the receiver acknowledges events that
 * never reach the replica; they are counted, the window measured, and the provider's redelivery (the senders
 * re-send them) records them again on the new primary. And the worker's attempts span the failover: from the
 * stall on, the SMTP server holds its answer to every email until the address has moved, so the crash finds an
 * attempt whose database effects committed on the primary alone (before its email) and whose mark and settle
 * reach the promoted replica, which has the event's row but not those commits: the settle must not call it
 * processed (the ledger refuses it, and the retry runs its effects again).
 */
import { expect } from 'vitest';
import {
  chaosReceiverEnv,
  deliverUntilAccepted,
  report,
  startStream,
  statusCounts,
  waitForOrExplain,
  type Attempt,
  type SendOutcome,
} from './cluster.ts';
import { keysOf, mixedEventSource } from './events.ts';
import { duplicateEffects, missingKeys, processedCount, snapshot, sumEffects } from './invariants.ts';
import { startReplicatedPostgres } from './replication.ts';
import { LEDGER_LACKS_EFFECTS } from '../../../packages/inbox/src/sql/ledger.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, startScenario } from './scenario.ts';
import { getStatus } from '@webhook-inbox/scenarios/receiver';

const SENDERS = 16;
const MIN_EVENTS = 300;
/**
 * Deliveries answered while WAL does not reach the replica, before the primary crashes: refused (synchronous), or
 * acknowledged (asynchronous: each one lost with the primary).
 */
const ANSWERED_WHILE_STALLED = 20;
/** Deliveries refused (503) between the crash and the promotion. */
const REFUSED_WITHOUT_PRIMARY = 10;

export async function runFailover({ synchronous }: { synchronous: boolean }): Promise<void> {
  const mode = synchronous ? 'sync' : 'async';
  const cluster = await startReplicatedPostgres({ synchronous });
  const mail = new MailGate();
  const scenario = await startScenario({
    databaseUrl: cluster.url,
    poolSize: 2,
    smtpDelayMs: () => 5,
    smtpHold: () => mail.passed(),
    afterStop: () => cluster.stop(),
  });
  const { pool, smtp } = scenario;
  try {
    const [worker, receiver] = await Promise.all([
      scenario.startWorker(),
      scenario.startReceiver(chaosReceiverEnv(cluster.url, { DATABASE_TIMEOUT_MS: '1000' })),
    ]);
    const attempts: Attempt[] = [];
    const sending = startStream(
      mixedEventSource(`fo${mode}`),
      (event) =>
        deliverUntilAccepted(event.delivery, () => receiver.url, {
          deadlineMs: 180_000,
          maxBackoffMs: 250,
          onAttempt: (attempt) => attempts.push(attempt),
        }),
      { concurrency: SENDERS },
    );
    const explain = () => snapshot(pool);

    // The load runs (events accepted and processed) and the replica has everything written so far.
    await waitForOrExplain(
      async () => sending.finished() >= 60 && (await processedCount(pool)) >= 30,
      { timeout: 120_000, interval: 100, message: '60 events accepted and 30 processed' },
      explain,
      scenario.processes,
    );
    const before = await cluster.caughtUp(60_000);
    expect(before.state).toBe('streaming');
    expect(before.syncState).toBe(synchronous ? 'sync' : 'async');

    cluster.stallReplication();
    const stalledAt = Date.now();
    if (!synchronous) mail.close();
    const answered = (a: Attempt) => (synchronous ? a.status !== 0 : a.status === 200);
    await waitForOrExplain(
      () =>
        attempts.filter((a) => a.start >= stalledAt && answered(a)).length >= ANSWERED_WHILE_STALLED &&
        (synchronous || smtp.unacknowledged() > 0),
      {
        timeout: 60_000,
        interval: 20,
        message: `${ANSWERED_WHILE_STALLED} deliveries ${synchronous ? 'answered' : 'acknowledged, and an email held,'} while stalled`,
      },
      explain,
      scenario.processes,
    );
    const heldAtCrash = smtp.unacknowledged();
    const crashedAt = await cluster.crashPrimary();
    // The address moves once the receiver has refused deliveries for want of a primary (a cloud endpoint takes
    // its time too).
    await waitForOrExplain(
      () =>
        attempts.filter((a) => a.start >= crashedAt && a.status === 503).length >= REFUSED_WITHOUT_PRIMARY,
      {
        timeout: 60_000,
        interval: 20,
        message: `${REFUSED_WITHOUT_PRIMARY} deliveries refused without a primary`,
      },
      explain,
      scenario.processes,
    );
    const promoting = Date.now();
    const { promotedAt, switchedAt } = await cluster.promoteReplica();
    mail.open();
    const readyAfterSwitch = await waitForOrExplain(
      async () => (await getStatus(receiver.managementUrl, '/readyz')) === 200 && Date.now(),
      { timeout: 60_000, interval: 50, message: 'the receiver ready on the new primary' },
      explain,
      scenario.processes,
    );

    const outcomes = await sending.finish(MIN_EVENTS);
    const events = sending.items;
    expect(outcomes.filter((o) => !o.outcome).map((o) => o.delivery.key)).toEqual([]);
    // Acknowledged (2xx) and not on the new primary: lost with the old one (a 2xx can reach its sender after the
    // crash; any 2xx after the switch came from the new primary).
    const acknowledged = outcomes.filter((o) => o.outcome);
    const lostKeys = new Set(await missingKeys(pool, keysOf(acknowledged)));
    const lost = acknowledged.filter((o) => lostKeys.has(o.delivery.key));
    // The provider redelivers them (Stripe retries until a 2xx; here: once more, by hand).
    const redelivered: SendOutcome[] = await Promise.all(
      lost.map((o) => deliverUntilAccepted(o.delivery, () => receiver.url, { deadlineMs: 60_000 })),
    );
    await scenario.waitForProcessed(events.length, {
      timeout: 180_000,
      message: `all ${events.length} events processed on the new primary`,
    });

    const all = outcomes.flatMap((o) => o.attempts);
    const during = all.filter((a) => a.start >= crashedAt && a.end <= switchedAt);
    const stalled = all.filter((a) => a.start >= stalledAt && a.end <= crashedAt);
    const after = await snapshot(pool);
    const { rows: ledger } = await pool.query<{ effect: string; n: number }>(
      `select effect, count(*)::int as n from effect_runs where status = 'completed' group by effect order by effect`,
    );
    const expected = sumEffects(events);
    const acceptedAt = lost.map((o) => o.acceptedAt!);
    report(`failover-${mode}`, {
      events: events.length,
      'replication before the stall': before,
      'answers while stalled': statusCounts([{ delivery: events[0]!.delivery, attempts: stalled }]),
      'stall to crash ms': crashedAt - stalledAt,
      'crash to switch ms': switchedAt - crashedAt,
      'promotion ms': promotedAt - promoting,
      'answers crash..switch': statusCounts([{ delivery: events[0]!.delivery, attempts: during }]),
      'switch to receiver ready ms': readyAfterSwitch - switchedAt,
      'acknowledged lost': lost.length,
      'loss window ms (oldest lost 2xx to crash)': acceptedAt.length
        ? crashedAt - Math.min(...acceptedAt)
        : 0,
      'redelivered: accepted again': redelivered.filter((o) => o.outcome === 'accepted').length,
      'emails held across the failover': heldAtCrash,
      'settles the ledger refused (effects lost, run again)': ledgerRefusals(worker.output()),
      processed: after.byStatus.processed ?? 0,
      duplicateDbEffects: duplicateEffects(after.effects, expected),
      'effects run (audit)': after.effects,
      'effects completed (ledger)': Object.fromEntries(ledger.map((row) => [row.effect, row.n])),
      duplicateEmails: smtp.duplicates(),
      'same receiver and worker': receiver.child.exitCode === null && worker.child.exitCode === null,
    });

    if (synchronous) {
      // Nothing is acknowledged that the replica does not have: while it could not get WAL, no 2xx.
      expect(stalled.filter((a) => a.status === 200)).toEqual([]);
      expect(lost).toEqual([]);
    } else {
      // Acknowledged while the replica was cut off, and lost with the primary; redelivered, they are new again.
      expect(lost.length).toBeGreaterThan(0);
      expect(redelivered.map((o) => o.outcome)).toEqual(lost.map(() => 'accepted'));
    }
    // No 2xx while there was no primary; 503s instead, and the same processes carry on.
    expect(during.filter((a) => a.status === 200)).toEqual([]);
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    expect(receiver.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    // Every event processed on the new primary, each database effect once there, an email per account.
    expectEachEventProcessedOnce(after, events, smtp);
    expectNoCrashLines(scenario.processes);
  } finally {
    mail.open();
    await scenario.stop();
  }
}

/** Holds the SMTP server's answers from `close()` until `open()`: the emails in flight wait. */
class MailGate {
  #gate: { until: Promise<void>; open: () => void } | undefined;

  passed(): Promise<void> {
    return this.#gate?.until ?? Promise.resolve();
  }

  close(): void {
    let open!: () => void;
    const until = new Promise<void>((resolve) => (open = resolve));
    this.#gate = { until, open };
  }

  open(): void {
    this.#gate?.open();
    this.#gate = undefined;
  }
}

/** The worker's settles that found effects missing from the ledger (`LEDGER_LACKS_EFFECTS`) and retried them. */
function ledgerRefusals(output: string): number {
  return output
    .split('\n')
    .filter(
      (line) => line.includes('"event failed; it will be retried"') && line.includes(LEDGER_LACKS_EFFECTS),
    ).length;
}
