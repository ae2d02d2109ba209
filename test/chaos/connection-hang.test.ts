/**
 * Scenario 5, a connection that hangs mid-job. Worker A reaches PostgreSQL through a TCP proxy, worker B
 * directly. While A has effects in flight (a transaction open, or an email's advisory lock held), every
 * connection A has open stops forwarding: not closed, just silent, as behind a network partition. A's jobs
 * expire and B retries them; B waits on the locks A's hung transactions still hold rather than running an
 * effect a second time. Then either the network heals (the same connections carry on) or the stalled
 * connections are reset (A must reconnect). Either way every event is processed, each database effect once.
 *
 * When the stalled connections are reset, worker A must survive: a pg 'error' event on a connection its effect
 * runner holds checked out must not be unhandled (every pool connection has an error listener).
 */
import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpSink } from '@webhook-inbox/testing/smtp';
import { CHAOS_QUEUE, report, startStream, waitForOrExplain, type WorkerProcess } from './support/cluster.ts';
import { mixedEventSource, type ChaosEvent } from './support/events.ts';
import { duplicateEffects, processedCount, snapshot, sumEffects } from './support/invariants.ts';
import {
  expectEachEventProcessedOnce,
  expectNoCrashLines,
  startScenario,
  type Scenario,
} from './support/scenario.ts';
import { StallProxy } from './support/stall-proxy.ts';
import { type Producer } from '@webhook-inbox/scenarios/worker';

const db = useTestDatabase();
const MIN_EVENTS_PER_PHASE = 150;
/** How far the producer stays ahead of the workers during a phase: events queued and not yet processed. */
const BACKLOG = 100;

let scenario: Scenario;
let pool: pg.Pool;
let smtp: SmtpSink;
let proxy: StallProxy;
let producer: Producer;
let workerA: WorkerProcess;
const sent: ChaosEvent[] = [];
let workerADeath: string | undefined;

/** Worker A reaches PostgreSQL through the proxy. */
const workerAEnv = () => scenario.workerEnv({ DATABASE_URL: proxy.url(db.url) });

beforeAll(async () => {
  proxy = await StallProxy.start(db.url);
  scenario = await startScenario({
    databaseUrl: db.url,
    smtpDelayMs: () => 5,
    producerQueue: CHAOS_QUEUE,
    afterStop: () => proxy.close(),
  });
  ({ pool, smtp, producer } = scenario);
  workerA = await scenario.startWorker(workerAEnv());
  // Worker B gives up a statement after 10 s (production: 60 s). A batch of B's can be blocked on rows that A's
  // hung transactions hold (another checkout of the same customer), and B fetches nothing more until it is
  // cancelled, and 60 s of that would outlast the phase's wait for a retry. A keeps the default: its
  // client-side timeout (statement timeout + 2 s) would otherwise end the hang before the test does.
  await scenario.startWorker(scenario.workerEnv({ WORKER_STATEMENT_TIMEOUT_MS: '10000' }));
});

afterAll(async () => {
  await scenario?.stop();
});

/** A's sessions now: how many are inside a transaction, and how many advisory locks (email claims) they hold. */
async function inFlightOf(ports: number[]): Promise<{ transactions: number; advisoryLocks: number }> {
  const { rows } = await pool.query<{ transactions: number; locks: number }>(
    // Only the effect runner's own connections: pg-boss's and the scheduled operations' transactions (maintenance,
    // the cron) are not jobs being worked, and stalling one of them leaves no job to retry.
    // A transaction counts only if it started in the last 2 s, so a connection of A still busy with the FIRST
    // phase (late attempts of jobs that expired while it hung and B completed meanwhile, holding their email
    // locks) is not mistaken for a job of this phase in progress: stalling it would leave nothing to retry.
    // `workerAQuiet` waits for A to be idle on its effect connections before a phase begins.
    `select count(*) filter (where a.xact_start > now() - interval '2 seconds')::int as transactions,
            (select count(*) from pg_locks l where l.locktype = 'advisory' and l.granted
                and l.pid in (select pid from pg_stat_activity
                               where client_port = any($1) and application_name = 'webhook-inbox-worker'))::int as locks
       from pg_stat_activity a where a.client_port = any($1) and a.application_name = 'webhook-inbox-worker'`,
    [ports],
  );
  return { transactions: rows[0]?.transactions ?? 0, advisoryLocks: rows[0]?.locks ?? 0 };
}

/**
 * Waits until worker A has been idle on its effect connections for a second: no transaction, no advisory lock, no
 * statement. After a hang A still runs late attempts of jobs that expired meanwhile (done elsewhere by then); a
 * stall during those would hang no job of the next phase.
 */
async function workerAQuiet(): Promise<void> {
  await waitForOrExplain(
    async () => {
      const { rows } = await pool.query<{ busy: number }>(
        `select count(*)::int as busy from pg_stat_activity a
          where a.client_port = any($1) and a.application_name = 'webhook-inbox-worker'
            and (a.state <> 'idle' or a.state_change > now() - interval '1 second'
                 or exists (select 1 from pg_locks l where l.pid = a.pid and l.locktype = 'advisory'))`,
        [proxy.sessionPorts()],
      );
      return rows[0]!.busy === 0;
    },
    { timeout: 60_000, interval: 100, message: "worker A done with the previous phase's jobs" },
    () => snapshot(pool),
    scenario.processes,
  );
}

async function phase(mode: 'resume' | 'cut'): Promise<void> {
  await workerAQuiet();
  const run = `hang${mode}`;
  const before = await processedCount(pool);
  // Events keep arriving until the stall has landed, so that A has jobs to be caught in, however long that takes.
  const loading = startStream(mixedEventSource(run), (event) => producer.send(event.raw), {
    concurrency: 20,
    backlog: { limit: BACKLOG, done: async () => (await processedCount(pool)) - before },
  });

  // Stall A's connections at a moment it is mid-job (else let them go and try again a moment later).
  const stall = await waitFor(
    async () => {
      const connections = proxy.stall();
      const inFlight = await inFlightOf(proxy.sessionPorts());
      if (inFlight.transactions + inFlight.advisoryLocks > 0) return { connections, ...inFlight };
      proxy.resume();
      return undefined;
    },
    { timeout: 60_000, interval: 20, message: 'worker A mid-job' },
  );
  const stalledAt = Date.now();

  // A's jobs expire and the other worker picks them up again: a second attempt of some event starts. B's batches
  // can block on rows of A's stalled transactions until B's 10 s statement timeout (see beforeAll).
  const retried = await waitForOrExplain(
    async () => {
      const { rows } = await pool.query<{ n: number }>(
        `select count(*)::int as n from webhook_events where event_id like $1 and attempts >= 2`,
        [`%${run}%`],
      );
      return rows[0]!.n > 0 ? rows[0]!.n : undefined;
    },
    { timeout: 60_000, interval: 100, message: "a retry of worker A's hung jobs" },
    () => snapshot(pool),
    scenario.processes,
  );
  const hungMs = Date.now() - stalledAt;
  const cut = mode === 'resume' ? (proxy.resume(), 0) : proxy.cutStalled();
  // Only now may the producer be waited for: while A's stalled transactions held rows (a shop, an account) that
  // every later event of that shop or customer needs, B could not get through the backlog the stream keeps.
  expect((await loading.finish(MIN_EVENTS_PER_PHASE)).filter((outcome) => outcome !== 'accepted')).toEqual(
    [],
  );
  const events = loading.items;
  sent.push(...events);

  await scenario.waitForProcessed(before + events.length, {
    timeout: 300_000,
    message: `the ${mode} phase's events processed`,
  });
  if (workerA.child.exitCode !== null || workerA.child.signalCode !== null) {
    const lines = workerA.output().split('\n');
    const at = lines.findIndex((line) => line.includes("Unhandled 'error' event"));
    workerADeath = `exit ${workerA.child.exitCode ?? workerA.child.signalCode}: ${
      at >= 0 ? lines.slice(at, at + 4).join(' | ') : lines.slice(-5).join(' | ')
    }`;
    // As a supervisor would; later phases need a worker A again.
    workerA = await scenario.startWorker(workerAEnv());
  }

  const after = await snapshot(pool);
  const expected = sumEffects(sent);
  report('connection-hang', {
    mode,
    events: events.length,
    stalledConnections: stall.connections,
    'A transactions open at stall': stall.transactions,
    'A email claims at stall': stall.advisoryLocks,
    'events retried while hung': retried,
    hungMs,
    cutConnections: cut,
    processed: after.byStatus.processed ?? 0,
    effects: after.effects,
    duplicates: duplicateEffects(after.effects, expected) + after.keysWithSeveralJobs,
    duplicateEmails: smtp.duplicates(),
    workerASurvived: workerADeath === undefined,
    lost: sent.length - (after.byStatus.processed ?? 0),
  });
  expectEachEventProcessedOnce(after, sent, smtp);
}

describe('a connection that hangs mid-job', () => {
  it('the network heals: the hung jobs were retried elsewhere, every effect once, nothing crashed', async () => {
    await phase('resume');
    // The same connections carried on (a transaction that idled past the server's timeout while hung was ended by
    // it, a handled failure): no email was sent twice, and nothing crashed.
    expect(smtp.duplicates()).toBe(0);
    expect(workerADeath).toBeUndefined();
    expectNoCrashLines(scenario.processes);
  });

  it('the hung connections are reset: worker A reconnects, every event processed, database effects once', async () => {
    const duplicatesBefore = smtp.duplicates();
    await phase('cut');
    // An email accepted by SMTP whose "sent" mark was on a reset connection may go again (same Message-ID).
    expect(smtp.duplicates() - duplicatesBefore).toBeLessThanOrEqual(40);
    expect(workerADeath).toBeUndefined();
  });
});
