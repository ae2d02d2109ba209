import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The worker's entry point, run as a process (a path read at run time: the worker is an app, not a dependency). */
const SERVER_ENTRY = fileURLToPath(new URL('../../../../apps/worker/src/server.ts', import.meta.url));

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** stdout + stderr so far (JSON log lines). */
  output(): string;
  /** Resolves with how it ended: `SIGKILL`, `SIGTERM` or an exit code. */
  readonly exited: Promise<NodeJS.Signals | number>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * The real worker (`node src/server.ts`, or `entry` with `args`) as a child process, with exactly this
 * environment.
 */
export function spawnWorker(
  env: Record<string, string>,
  { entry = SERVER_ENTRY, args = [] }: { entry?: string; args?: readonly string[] } = {},
): WorkerProcess {
  const child = spawn(process.execPath, [entry, ...args], {
    env: {
      // Tests start dozens of workers: reuse compiled code across them.
      NODE_COMPILE_CACHE: path.join(os.tmpdir(), 'webhook-inbox-worker-test-compile-cache'),
      WORKER_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | number>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code ?? -1)),
  );
  return {
    child,
    output: () => output,
    exited,
    kill: (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
