import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { recordEffectRoutes } from '@webhook-inbox/inbox';
import { createExampleInbox } from '@webhook-inbox/worker';
import { parseConfig, startReceiver, type Receiver } from '@webhook-inbox/receiver';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI as a real process, as an operator would, with the test's environment minus its DATABASE_URL, plus
 * `env` (a value `undefined` removes the variable).
 */
export function runCli(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return promisify(execFile)(process.execPath, [main, ...args], { env: cliEnv(env) }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, ...base } = process.env;
  const fullEnv: NodeJS.ProcessEnv = { ...base, ...env };
  for (const [key, value] of Object.entries(fullEnv)) if (value === undefined) delete fullEnv[key];
  return fullEnv;
}

/** A CLI command that runs until stopped (`listen`), as its own process; its stdout and stderr kept apart. */
export interface RunningCli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, and its exit code once it exited. */
  stop: () => Promise<number | null>;
}

/** Starts the CLI as `runCli` does, without waiting for it to end; the caller stops it. */
export function startCli(args: string[], env: Record<string, string | undefined>): RunningCli {
  const child = spawn(process.execPath, [main, ...args], {
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** What the example worker records when it starts: the CLI's replays read it. */
export async function recordExampleRoutes(pool: pg.Pool): Promise<void> {
  const example = createExampleInbox({
    mailer: { send: () => Promise.reject(new Error('no mail in this test')), close: () => {} },
    messageIdDomain: 'localhost',
  });
  await recordEffectRoutes(pool, example.effectRoutes());
}

/**
 * A receiver for the CLI to talk to (`env` added to its configuration) and a pool on the test database with the
 * example worker's routes recorded, for the file's tests; both closed after them.
 */
export function useCliReceiver(
  database: { url: string },
  env: Record<string, string>,
): { receiver: () => Receiver; pool: () => pg.Pool } {
  let receiver: Receiver | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    receiver = await startReceiver(
      parseConfig({
        DATABASE_URL: database.url,
        PORT: '0',
        MANAGEMENT_PORT: '0',
        LOG_LEVEL: 'silent',
        ...env,
      }),
    );
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    await recordExampleRoutes(pool);
  });
  afterAll(async () => {
    await receiver?.close();
    await pool?.end();
  });
  return { receiver: () => receiver!, pool: () => pool! };
}
