import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findFreePorts } from '../../packages/testing/src/embedded-postgres.ts';
import { startFlagsOf } from './process.ts';
import { STRIPE_SECRET } from './stripe-requests.ts';

/** The receiver's entry point, as `pnpm --filter @webhook-inbox/receiver-app start` runs it. */
export const SERVER = fileURLToPath(new URL('../../apps/receiver/src/server.ts', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../../apps/receiver/package.json', import.meta.url));

/** The Node flags of `pnpm --filter @webhook-inbox/receiver-app start` (`node <flags> src/server.ts`). */
export const startFlags = () => startFlagsOf(PACKAGE);

export interface SpawnedReceiver {
  child: ChildProcess;
  url: string;
  /** The management listener (`/metrics`); the bare reference has none. */
  managementUrl: string;
  stop(): Promise<void>;
}

/**
 * The receiver as `pnpm --filter @webhook-inbox/receiver-app start` runs it (or the bare reference server, with the
 * same flags and environment), in its own process (its RSS is its own).
 */
export async function spawnReceiver(
  script: string,
  databaseUrl: string,
  poolSize: number,
  logLevel: string,
  extraEnv: Record<string, string> = {},
): Promise<SpawnedReceiver> {
  const [port, managementPort] = await findFreePorts(2);
  const child = spawn(process.execPath, [...startFlags(), script], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      MANAGEMENT_PORT: String(managementPort),
      STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
      SHOPIFY_WEBHOOK_SECRET: 'bench-shopify-secret',
      DATABASE_POOL_SIZE: String(poolSize),
      LOG_LEVEL: logLevel,
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the receiver exited (${child.exitCode}): ${stderr}`);
    // The public /healthz: the receiver listens only once its database is reachable and migrated.
    const ready = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the receiver did not become ready: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    url,
    managementUrl: `http://127.0.0.1:${managementPort}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
