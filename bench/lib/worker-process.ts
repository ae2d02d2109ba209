import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { startFlagsOf } from './process.ts';

/** The worker's entry point, as `pnpm --filter @webhook-inbox/worker start` runs it. */
export const WORKER = fileURLToPath(new URL('../../apps/worker/src/server.ts', import.meta.url));
const WORKER_PACKAGE = fileURLToPath(new URL('../../apps/worker/package.json', import.meta.url));
/** Concurrent senders when a backlog is recorded. */
export const SENDERS = 16;

export interface Rate {
  events: number;
  seconds: number;
  perSecond: number;
}

/** The Node flags of `pnpm --filter @webhook-inbox/worker start` (`node <flags> src/server.ts`). */
export const workerStartFlags = () => startFlagsOf(WORKER_PACKAGE);

/** `events` sends, `senders` (default `SENDERS`) at a time. */
export async function sendAll(
  events: number,
  send: (i: number) => Promise<unknown>,
  senders = SENDERS,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (next < events) await send(next++);
    }),
  );
}

export async function timeUntil(target: number, done: () => Promise<number>): Promise<Rate> {
  const started = performance.now();
  const seconds = await waitForCount(target, done, started);
  return { events: target, seconds, perSecond: target / seconds };
}

/** Runs `work` (the sends) and waits for `target` done; the rate counts the `events` sent in this phase. */
export async function timeWhile(
  work: () => Promise<void>,
  target: number,
  done: () => Promise<number>,
  events: number,
): Promise<Rate> {
  const started = performance.now();
  await work();
  const seconds = await waitForCount(target, done, started);
  return { events, seconds, perSecond: events / seconds };
}

async function waitForCount(target: number, done: () => Promise<number>, started: number): Promise<number> {
  const deadline = started + 600_000;
  for (;;) {
    const n = await done();
    if (n >= target) break;
    if (performance.now() > deadline) throw new Error(`only ${n} of ${target} done after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return (performance.now() - started) / 1000;
}

export async function count(pool: pg.Pool, sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(sql, values);
  return rows[0]?.n ?? 0;
}

/** A child process whose stdout goes to /dev/null once `ready` has been printed. */
export async function spawnReady(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: string,
): Promise<ChildProcess> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) {
        resolve();
        // Keep draining, keep nothing.
        child.stdout?.off('data', onData);
        child.stdout?.resume();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`${args[0]} exited (${code}) before it was ready:\n${output}`)),
    );
  });
  return child;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
