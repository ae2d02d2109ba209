import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** stdout + stderr so far (JSON log lines). */
  output(): string;
  /** Resolves with how it ended: `SIGKILL`, `SIGTERM` or an exit code. */
  readonly exited: Promise<NodeJS.Signals | number>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * The real worker (`entry`, its `src/server.ts`, with `args`) as a child process, with exactly this environment.
 * The caller names the entry: the worker is an app, which no package depends on.
 */
export function spawnWorker(
  env: Record<string, string>,
  { entry, args = [] }: { entry: string; args?: readonly string[] },
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
