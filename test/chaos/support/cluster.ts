import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
/**
 * Shared pieces of the chaos scenarios: real receiver and worker processes (spawned by `@webhook-inbox/testing`),
 * a sender that retries like Stripe does, and the figures every scenario prints and checks.
 */
import { waitFor, type WaitOptions } from '@webhook-inbox/testing';
import type { QueueSettings } from '../../../packages/inbox/src/queue.ts';
import {
  post,
  receiverEnv,
  spawnReceiver,
  type Delivery,
  type SpawnedReceiver,
} from '@webhook-inbox/scenarios/receiver';
import { queueEnv, TEST_QUEUE, spawnWorker, type WorkerProcess } from '@webhook-inbox/scenarios/worker';

export type { Delivery, SpawnedReceiver, WorkerProcess };

/**
 * The scenarios' retry policy: immediate retries, and a job whose worker died is retried after 3 s (expiry) plus
 * up to 1 s (supervision). Expiry is short so that recovery fits in a test, long enough that a busy two-core
 * machine does not expire healthy batches all the time.
 */
export const CHAOS_QUEUE: QueueSettings = { ...TEST_QUEUE, expireInSeconds: 3 };

/** A worker's environment: fast polling and supervision, the test retry policy, and whatever the scenario adds. */
export function workerEnv(
  databaseUrl: string,
  smtpUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    SMTP_URL: smtpUrl,
    // "worker started" is an info line: it is how a scenario knows the queues are configured.
    LOG_LEVEL: 'info',
    WORKER_POLL_SECONDS: '0.5',
    WORKER_SUPERVISE_SECONDS: '1',
    WORKER_BATCH_SIZE: '20',
    WORKER_CONCURRENCY: '2',
    SHUTDOWN_TIMEOUT_MS: '10000',
    ...queueEnv(CHAOS_QUEUE),
    ...extra,
  };
}

/** The worker's entry point, as its image runs it. */
const WORKER_ENTRY = fileURLToPath(new URL('../../../apps/worker/src/server.ts', import.meta.url));

/** Spawns a worker and waits until it works (its queues configured, its consumers registered). */
export async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = spawnWorker(env, { entry: WORKER_ENTRY });
  let ended: NodeJS.Signals | number | undefined;
  void worker.exited.then((how) => (ended = how));
  try {
    // Starting a Node process (and pg-boss in it) takes long on a two-core machine shared with other work.
    await waitFor(() => ended !== undefined || worker.output().includes('"worker started"'), {
      timeout: 180_000,
      message: 'the worker to start',
    });
  } catch (error) {
    worker.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${worker.output().slice(-4_000)}`, { cause: error });
  }
  if (ended !== undefined) throw new Error(`the worker exited at start (${ended}):\n${worker.output()}`);
  return worker;
}

/**
 * `waitFor`, and on timeout an error that says what the system looked like: `explain()` (a snapshot of the
 * database) and the end of each process's output.
 */
export async function waitForOrExplain<T>(
  condition: () => T | Promise<T>,
  options: WaitOptions,
  explain: () => Promise<unknown>,
  processes: Iterable<WorkerProcess | SpawnedReceiver> = [],
): Promise<Exclude<T, false | undefined>> {
  try {
    return await waitFor(condition, options);
  } catch (error) {
    const state = await explain().catch((e: unknown) => `(could not explain: ${String(e)})`);
    const headers = [...processes].map(
      (p, i) => `--- process ${i} (pid ${p.child.pid}, exit ${p.child.exitCode ?? p.child.signalCode}):`,
    );
    // The whole output goes to a file (a failure's cause is often minutes before it), its end into the error.
    const full = path.join(os.tmpdir(), `webhook-inbox-chaos-${process.pid}-${Date.now()}.log`);
    writeFileSync(full, [...processes].map((p, i) => `${headers[i]}\n${p.output()}`).join('\n'));
    const outputs = [...processes].map((p, i) => `${headers[i]}\n${p.output().slice(-3_000)}`);
    throw new Error(
      `${(error as Error).message}\nstate: ${JSON.stringify(state)}\n${outputs.join('\n')}\n(whole output: ${full})`,
      { cause: error },
    );
  }
}

/** The receiver's environment (the receiver tests' secrets), with small log output. */
export function chaosReceiverEnv(
  databaseUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return receiverEnv(databaseUrl, { LOG_LEVEL: 'warn', DATABASE_POOL_SIZE: '8', ...extra });
}

export async function startReceiver(env: Record<string, string>): Promise<SpawnedReceiver> {
  return spawnReceiver(env);
}

/**
 * Lines of a process's output that mean it crashed or hit a bug, rather than a handled failure: an uncaught error,
 * pino's fatal level, V8's `FATAL ERROR`, a TypeError. PostgreSQL's own `"severity":"FATAL"` in a logged error is a
 * connection the server ended (an idle-in-transaction timeout while a connection hung), which the worker handles.
 */
export function crashLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) =>
      /uncaught|unhandled|"level":60|FATAL ERROR|TypeError|ReferenceError|heap out of memory/i.test(line),
    );
}

export interface Attempt {
  /** HTTP status; 0: no HTTP answer (connection refused, reset or timed out). */
  status: number;
  /** When the attempt started and ended (ms since epoch). */
  start: number;
  end: number;
}

export interface SendOutcome {
  delivery: Delivery;
  attempts: Attempt[];
  /** The 2xx answer's status field, when one came. */
  outcome?: 'accepted' | 'duplicate';
  /** When the 2xx arrived (ms since epoch). */
  acceptedAt?: number;
}

export interface RetryOptions {
  /** Give up on an event after this long (a test bound; Stripe retries for days). */
  deadlineMs?: number;
  /** First pause between attempts; doubled each time up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Per-attempt HTTP timeout. */
  timeoutMs?: number;
  /** Sees every attempt as it ends (a live log, while deliveries are still being retried). */
  onAttempt?: (attempt: Attempt) => void;
}

/**
 * Delivers one event the way Stripe does: any non-2xx answer or connection error is retried, with backoff,
 * until a 2xx (or the test's deadline). `target` is read at each attempt: the receiver may have moved.
 */
export async function deliverUntilAccepted(
  delivery: Delivery,
  target: () => string,
  {
    deadlineMs = 60_000,
    backoffMs = 25,
    maxBackoffMs = 400,
    timeoutMs = 10_000,
    onAttempt,
  }: RetryOptions = {},
): Promise<SendOutcome> {
  const result: SendOutcome = { delivery, attempts: [] };
  const deadline = Date.now() + deadlineMs;
  for (let pause = backoffMs; Date.now() < deadline; pause = Math.min(pause * 2, maxBackoffMs)) {
    const start = Date.now();
    const record = (status: number) => {
      const attempt = { status, start, end: Date.now() };
      result.attempts.push(attempt);
      onAttempt?.(attempt);
    };
    try {
      const response = await post(target(), delivery, { timeoutMs });
      record(response.status);
      if (response.status >= 200 && response.status < 300) {
        result.outcome = (JSON.parse(response.body) as { status: 'accepted' | 'duplicate' }).status;
        result.acceptedAt = Date.now();
        return result;
      }
    } catch {
      record(0);
    }
    // The provider's retry schedule, compressed: this is the sender's behaviour, not a wait in the test.
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return result;
}

/** Runs `fn` over `items`, at most `concurrency` at a time, and returns the results in order. */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index]!, index);
      }
    }),
  );
  return results;
}

export interface Stream<T, R> {
  /** Items started so far, in order. */
  readonly items: readonly T[];
  /** Items whose `fn` has resolved so far. */
  finished(): number;
  /**
   * Starts no new item once at least `atLeast` have started, then resolves with every item's result, in order,
   * when the started ones are done.
   */
  finish(atLeast?: number): Promise<R[]>;
}

export interface StreamOptions {
  concurrency: number;
  /** Keeps at most `limit` items started ahead of `done()` (say, events queued but not yet processed). */
  backlog?: { limit: number; done: () => Promise<number> };
}

/**
 * Runs `fn` over fresh items from `make(index)`, `concurrency` at a time, until `finish()`: a load that lasts
 * until the scenario has done what it needed it for (a kill, an outage, a stall), however fast the system
 * under test gets through it.
 */
export function startStream<T, R>(
  make: (index: number) => T,
  fn: (item: T, index: number) => Promise<R>,
  { concurrency, backlog }: StreamOptions,
): Stream<T, R> {
  const items: T[] = [];
  const results: R[] = [];
  let finished = 0;
  let until = Infinity;
  let done = 0;
  let refreshing: Promise<void> | undefined;
  const refresh = () =>
    (refreshing ??= backlog!
      .done()
      .then((n) => void (done = n))
      .finally(() => (refreshing = undefined)));
  const lanes = Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (items.length < until) {
        if (backlog && items.length - done >= backlog.limit) {
          await refresh();
          // The producer's own pacing while the consumers catch up, not a wait in the test.
          if (items.length - done >= backlog.limit) await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        const index = items.length;
        const item = make(index);
        items.push(item);
        results[index] = await fn(item, index);
        finished++;
      }
    }),
  );
  // A failed item stops every lane; finish() reports the failure.
  lanes.catch(() => (until = 0));
  return {
    items,
    finished: () => finished,
    finish: async (atLeast = 0) => {
      until = Math.max(atLeast, 0);
      await lanes;
      return results;
    },
  };
}

/** Counts the statuses of many send outcomes: `{ 200: n, 503: m, 0: k }`. */
export function statusCounts(outcomes: readonly SendOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { attempts } of outcomes) {
    for (const { status } of attempts) counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

/** Prints a scenario's figures as one line: `chaos[name] key=value ...`. */
export function report(name: string, figures: Record<string, unknown>): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  console.log(`chaos[${name}] ${text}`);
}

/** Stops everything a scenario started, whatever state it is in. */
export async function killAll(processes: Iterable<WorkerProcess | SpawnedReceiver>): Promise<void> {
  await Promise.all(
    [...processes].map(async (p) => {
      if ('kill' in p) {
        p.kill('SIGKILL');
        await p.exited;
      } else {
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        await p.exited;
      }
    }),
  );
}
