/**
 * A worker frozen (SIGSTOP) while it holds welcome emails' claims, thawed (SIGCONT) once another worker has
 * finished its events: the thawed worker must send none of them again. Its leases ran out while it was stopped and
 * the other worker took them; every email it still had to send proves its claim inside its SMTP transaction, once
 * the server accepted DATA (`holdLease`, the mailer's `beforeSend`), finds it gone, and drops the connection
 * without the message's closing dot.
 *
 * Two worker processes with production's queue settings (heartbeat 10 s), 60 checkouts of 60 accounts, the SMTP
 * sink slow enough that a batch's emails queue for its connections; once the victim has sent ten, the sink holds
 * the answers to its next ones until the freeze, so it is frozen with every connection mid-transaction and more
 * emails claimed than it has connections. The victim reaches the sink through a proxy,
 * so the sink tells its messages apart. The only repeat allowed is a copy whose SMTP transaction the victim had
 * begun before it was stopped (MAIL FROM read by the sink before the SIGCONT): a send in flight at the freeze, or
 * one that had ended but whose mark had not landed; the scenario counts and prints them. A message of the victim
 * whose transaction began after the thaw must not be delivered at all.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { loadavg } from 'node:os';
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type { SmtpSink } from '@webhook-inbox/testing/smtp';
import { expect, it } from 'vitest';
import { DEFAULT_QUEUE_SETTINGS } from '../../packages/inbox/src/queue.ts';
import { crashLines, report, waitForOrExplain } from './support/cluster.ts';
import { checkout } from './support/events.ts';
import { snapshot } from './support/invariants.ts';
import { expectEachEventProcessedOnce, expectNoCrashLines, withScenario } from './support/scenario.ts';
import { StallProxy } from './support/stall-proxy.ts';
import { queueEnv } from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();

const EVENTS = 60;
/** The worker's SMTP connections (apps/worker's mailer). */
const SMTP_CONNECTIONS = 10;

interface Repeats {
  duplicates: number;
  /** Repeats explained by a copy the victim began before it was stopped. */
  inFlightAtFreeze: number;
  /** Repeats with no such copy: an email sent twice by the fenced protocol. */
  unexplained: number;
  /** The victim's messages whose transaction began after the thaw: sends it made without a claim. */
  sentAfterThaw: number;
}

function repeats(smtp: SmtpSink, victimPorts: ReadonlySet<number>, thawedAt: number): Repeats {
  const copies = new Map<string, Array<{ victim: boolean; before: boolean }>>();
  let sentAfterThaw = 0;
  for (const { messageId, clientPort, mailFromAt } of smtp.messages) {
    const victim = victimPorts.has(clientPort);
    if (victim && mailFromAt >= thawedAt) sentAfterThaw++;
    const list = copies.get(messageId) ?? [];
    list.push({ victim, before: mailFromAt < thawedAt });
    copies.set(messageId, list);
  }
  const result: Repeats = { duplicates: 0, inFlightAtFreeze: 0, unexplained: 0, sentAfterThaw };
  for (const list of copies.values()) {
    const extra = list.length - 1;
    if (extra === 0) continue;
    const explained = Math.min(extra, list.filter((c) => c.victim && c.before).length);
    result.duplicates += extra;
    result.inFlightAtFreeze += explained;
    result.unexplained += extra - explained;
  }
  return result;
}

it('a worker frozen holding emails and thawed after another finished them sends none of them again', async () => {
  const proxies: StallProxy[] = [];
  // Once the victim has sent its first emails, the sink holds the answers to its next ones until the freeze: its
  // connections stay mid-transaction and the rest of its claimed emails wait for one, however busy the machine.
  let holdVictim: ((clientPort: number) => boolean) | undefined;
  const held: Array<() => void> = [];
  const releaseHeld = () => {
    holdVictim = undefined;
    for (const release of held.splice(0)) release();
  };
  await withScenario(
    {
      databaseUrl: db.url,
      // A message takes 20-120 ms to be accepted: a batch's twenty emails wait for the ten SMTP connections.
      smtpDelayMs: () => randomInt(20, 120),
      smtpHold: (clientPort) =>
        holdVictim?.(clientPort) ? new Promise<void>((resolve) => held.push(resolve)) : Promise.resolve(),
      producerQueue: DEFAULT_QUEUE_SETTINGS,
      afterStop: async () => {
        releaseHeld();
        await Promise.all(proxies.map((p) => p.close()));
      },
    },
    async (scenario) => {
      const { pool, smtp, producer } = scenario;
      const env = (extra: Record<string, string> = {}) =>
        scenario.workerEnv({
          ...queueEnv(DEFAULT_QUEUE_SETTINGS),
          WORKER_SUPERVISE_SECONDS: '5',
          ...extra,
        });
      const mail = await StallProxy.start(smtp.url);
      proxies.push(mail);
      // Alone until it is stopped, so every claim is its own. Its stop waits for its batches to end, however
      // long: the thawed worker does all it would do.
      const victim = await scenario.startWorker(
        env({ SMTP_URL: mail.url(smtp.url), SHUTDOWN_TIMEOUT_MS: '120000' }),
      );
      const loadAtStart = loadavg()[0]!;

      const run = randomBytes(3).toString('hex');
      const events = Array.from({ length: EVENTS }, (_, i) =>
        checkout(`fz${run}`, i, `cus_fz${run}_${i}`, false),
      );
      await Promise.all(events.map((event) => producer.send(event.raw)));

      // The victim holds claims beyond the emails inside their SMTP transaction (the others wait for a
      // connection), with its SMTP connections open (ten emails sent) and their next answers held.
      const victimSent = () => smtp.messages.filter((m) => mail.everPorts().includes(m.clientPort)).length;
      await waitFor(() => victimSent() >= SMTP_CONNECTIONS, {
        timeout: 120_000,
        message: "the victim's first emails sent",
      });
      holdVictim = (clientPort) => mail.everPorts().includes(clientPort);
      const claimed = async () =>
        (
          await pool.query<{ n: number }>(
            `select count(*)::int as n from idempotency_keys where status = 'claimed' and claim_expires_at > now()`,
          )
        ).rows[0]!.n;
      await waitForOrExplain(
        async () =>
          smtp.openTransactions(mail.everPorts()) > 0 &&
          (await claimed()) > smtp.openTransactions(mail.everPorts()),
        {
          timeout: 120_000,
          message: 'emails of the victim claimed and waiting for a connection',
        },
        () => snapshot(pool),
        scenario.processes,
      );
      victim.kill('SIGSTOP');
      const openAtFreeze = smtp.openTransactions(mail.everPorts());
      const victimSentBefore = victimSent();
      const claimedAtFreeze = await claimed();
      // Answered while it is stopped: it reads them after the thaw, when its claims are another worker's.
      releaseHeld();

      // Another worker finishes every event, the victim's included (its heartbeat went silent).
      await scenario.startWorker(env());
      await scenario.waitForProcessed(EVENTS, {
        timeout: 180_000,
        message: `the ${EVENTS} events processed while the victim is stopped`,
      });
      const thawedAt = Date.now();
      victim.kill('SIGCONT');
      victim.kill('SIGTERM');
      const exit = await victim.exited;

      const after = await snapshot(pool);
      const victimPorts = new Set(mail.everPorts());
      const counted = repeats(smtp, victimPorts, thawedAt);
      report('worker-freeze', {
        events: EVENTS,
        'claims held at the freeze': claimedAtFreeze,
        'victim emails in their SMTP transaction at the freeze': openAtFreeze,
        'victim emails sent before the freeze': victimSentBefore,
        'victim exit after the thaw': exit,
        duplicates: counted.duplicates,
        'repeats of a send begun before the freeze': counted.inFlightAtFreeze,
        'repeats unexplained': counted.unexplained,
        'victim sends begun after the thaw': counted.sentAfterThaw,
        'load average at start': loadAtStart.toFixed(1),
        'load average at end': loadavg()[0]!.toFixed(1),
      });
      expect(counted.sentAfterThaw).toBe(0);
      expect(counted.unexplained).toBe(0);
      expect(after.byStatus).toEqual({ processed: EVENTS });
      expectEachEventProcessedOnce(after, events, smtp);
      // The server ends a transaction the victim left idle while it was stopped (FATAL 25P03): expected here.
      expectNoCrashLines(scenario.processes.filter((p) => p !== victim));
      expect(
        crashLines(victim.output()).filter((line) => !line.includes('idle-in-transaction timeout')),
      ).toEqual([]);
    },
  );
});
