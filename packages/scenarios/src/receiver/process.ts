import { spawn, type ChildProcess } from 'node:child_process';
import { findFreePorts } from '@webhook-inbox/testing/embedded';
import { waitFor } from '@webhook-inbox/testing';
import { getStatus } from './http.ts';

/**
 * Node's arguments that run the receiver as its own process: `runReceiver()` of `@webhook-inbox/receiver/main`,
 * the runtime that `webhook-inbox receiver` and the apps/receiver entry start. Found by path at run time rather
 * than imported: the receiver's own tests use this package, so a dependency on the receiver would be a cycle.
 */
export const RECEIVER_ARGS: readonly string[] = [
  '--input-type=module',
  '--eval',
  `const { runReceiver } = await import(${JSON.stringify(
    new URL('../../../receiver/src/main.ts', import.meta.url).href,
  )});\nawait runReceiver();`,
];

export interface SpawnedReceiver {
  child: ChildProcess;
  url: string;
  managementUrl: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The receiver (`RECEIVER_ARGS`) as its own process on free ports (public and management), ready once
 * `/readyz` answers 200. `nodeFlags` as in the package's `start` script, e.g. its heap cap. A port found free can
 * be taken (by any connection's local port) before the receiver binds it: then it starts again on others.
 */
export async function spawnReceiver(
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<SpawnedReceiver> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnReceiverOnce(env, nodeFlags);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === 3) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function spawnReceiverOnce(env: Record<string, string>, nodeFlags: string[]): Promise<SpawnedReceiver> {
  const [port, managementPort] = await findFreePorts(2);
  // Only what the test gives it (not this process's DATABASE_URL, which is the admin database).
  const child = spawn(process.execPath, [...nodeFlags, ...RECEIVER_ARGS], {
    env: {
      LOG_LEVEL: 'info',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MANAGEMENT_PORT: String(managementPort),
      MANAGEMENT_HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const managementUrl = `http://127.0.0.1:${managementPort}`;
  const state = await waitFor(
    async () =>
      child.exitCode !== null ? 'exited' : (await getStatus(managementUrl, '/readyz')) === 200 && 'ready',
    // Starting a Node process is slow on a loaded machine.
    { timeout: 120_000, message: 'the spawned receiver to be ready' },
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  });
  if (state === 'exited') {
    const message = `the receiver exited early (code ${child.exitCode}):\n${output}`;
    throw output.includes('EADDRINUSE') ? new PortTakenError(message) : new Error(message);
  }
  return {
    child,
    url,
    managementUrl,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
