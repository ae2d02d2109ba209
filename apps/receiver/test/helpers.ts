import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { findFreePorts } from '@webhook-inbox/testing/embedded';
import { EVENTS_QUEUE, ensureQueues } from '@webhook-inbox/inbox';
import { createProviders, signShopify, signStandardWebhook, signStripe } from '@webhook-inbox/providers';
import { waitFor } from '@webhook-inbox/testing';
import pg from 'pg';
import pino from 'pino';
import {
  ConfigError,
  createApp,
  createManagementApp,
  createMetrics,
  createRequestPool,
  createSender,
  parseConfig,
  type Logger,
} from '../src/index.ts';

export const SERVER_ENTRY = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));

export const STRIPE_SECRET = 'whsec_test_receiver_primary';
export const STRIPE_OLD_SECRET = 'whsec_test_receiver_rotated_out';
export const SHOPIFY_SECRET = 'shpss_test_receiver_client_secret';
export const SW_SECRET = `whsec_${Buffer.from('standard-webhooks-test-key-32byte').toString('base64')}`;
export const SW_NAME = 'acme';

/** The issues start-up reports for `env` with this DATABASE_URL, or none when the configuration is accepted. */
export function configIssues(databaseUrl: string, env: Record<string, string>): string[] {
  try {
    parseConfig({ DATABASE_URL: databaseUrl, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

/** The receiver's environment for these secrets (plus whatever the test adds). */
export function receiverEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    STRIPE_WEBHOOK_SECRET: `${STRIPE_SECRET},${STRIPE_OLD_SECRET}`,
    SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
    STANDARD_WEBHOOKS: `${SW_NAME}=${SW_SECRET}`,
    // Any free port: several receivers run at once in the test run.
    MANAGEMENT_PORT: '0',
    ...extra,
  };
}

export function fixture(path: string): string {
  return readFileSync(`${FIXTURES}${path}`, 'utf8');
}

/** One signed HTTP delivery: where to send it, the exact bytes, the headers, and the key it should record. */
export interface Delivery {
  provider: string;
  path: string;
  body: string;
  headers: Record<string, string>;
  key: string;
}

export function stripeDelivery(
  options: {
    id?: string;
    body?: string;
    secret?: string;
    timestamp?: number;
    signature?: string | null;
  } = {},
): Delivery {
  const id = options.id ?? `evt_${randomBytes(12).toString('hex')}`;
  const body =
    options.body ??
    JSON.stringify({ ...(JSON.parse(fixture('stripe/checkout.session.completed.json')) as object), id });
  const signature =
    options.signature === undefined
      ? signStripe({ payload: body, secret: options.secret ?? STRIPE_SECRET, timestamp: options.timestamp })
      : options.signature;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (signature !== null) headers['Stripe-Signature'] = signature;
  return { provider: 'stripe', path: '/webhooks/stripe', body, headers, key: id };
}

export function shopifyDelivery(
  options: {
    eventId?: string;
    body?: string;
    secret?: string;
    signature?: string | null;
    omit?: string[];
  } = {},
): Delivery {
  const eventId = options.eventId ?? randomUUID();
  const body = options.body ?? fixture('shopify/orders_create.json');
  const signature =
    options.signature === undefined
      ? signShopify({ payload: body, secret: options.secret ?? SHOPIFY_SECRET })
      : options.signature;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'X-Shopify-Topic': 'orders/create',
    'X-Shopify-Shop-Domain': 'dev-shop.myshopify.com',
    'X-Shopify-Event-Id': eventId,
    'X-Shopify-Webhook-Id': randomUUID(),
    'X-Shopify-Triggered-At': new Date().toISOString(),
  };
  if (signature !== null) headers['X-Shopify-Hmac-Sha256'] = signature;
  for (const name of options.omit ?? []) delete headers[name];
  return {
    provider: 'shopify',
    path: '/webhooks/shopify',
    body,
    headers,
    key: `dev-shop.myshopify.com:orders/create:${eventId}`,
  };
}

export function standardDelivery(
  options: {
    id?: string;
    body?: string;
    secret?: string;
    timestamp?: number;
    signature?: string | null;
  } = {},
): Delivery {
  const id = options.id ?? `msg_${randomBytes(10).toString('hex')}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const body =
    options.body ??
    JSON.stringify({ type: 'invoice.paid', data: { amount: 4200, id: 9007199254740993n.toString() } });
  const signature =
    options.signature === undefined
      ? signStandardWebhook({ id, timestamp, payload: body, secret: options.secret ?? SW_SECRET })
      : options.signature;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
  };
  if (signature !== null) headers['webhook-signature'] = signature;
  return { provider: SW_NAME, path: `/webhooks/${SW_NAME}`, body, headers, key: id };
}

/** A silent logger that keeps its lines, for assertions on what gets logged. */
export function memoryLogger(level: pino.LevelWithSilent = 'info'): {
  logger: Logger;
  lines: () => string[];
} {
  const chunks: string[] = [];
  const logger = pino({ level }, { write: (line: string) => void chunks.push(line) });
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  /** The management listener's app on the same pool and metrics (`/readyz`, `/metrics`). */
  management: ReturnType<typeof createManagementApp>;
  pool: pg.Pool;
  lines: () => string[];
  close(): Promise<void>;
}

/** The real app (real pool, real pg-boss sender, real providers) on a test database, for `app.request()`. */
export async function createTestApp(
  databaseUrl: string,
  options: { maxBodyBytes?: number; poolUrl?: string; adminToken?: string } = {},
): Promise<TestApp> {
  const { logger, lines } = memoryLogger();
  // The receiver's own pool (pipelined, with its deadline), small.
  const config = parseConfig({
    DATABASE_URL: options.poolUrl ?? databaseUrl,
    DATABASE_POOL_SIZE: '4',
    DATABASE_TIMEOUT_MS: '2000',
  });
  const pool = createRequestPool(config, logger);
  const boss = createSender(databaseUrl, logger);
  await boss.start();
  await ensureQueues(boss);
  const providers = createProviders({
    stripeSecrets: [STRIPE_SECRET, STRIPE_OLD_SECRET],
    shopifySecrets: [SHOPIFY_SECRET],
    standardWebhooks: [{ name: SW_NAME, secrets: [SW_SECRET] }],
    toleranceSeconds: 300,
  });
  const metrics = createMetrics(pool, { defaultMetrics: false });
  const app = createApp({
    pool,
    boss,
    providers,
    logger,
    metrics,
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    adminToken: options.adminToken,
  });
  const management = createManagementApp({ pool, boss, logger, metrics });
  return {
    app,
    management,
    pool,
    lines,
    close: async () => {
      await boss.stop({ graceful: false, close: true });
      await pool.end();
    },
  };
}

export function send(app: TestApp['app'], delivery: Delivery, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(
    app.request(delivery.path, { method: 'POST', body: delivery.body, headers: delivery.headers, ...init }),
  );
}

/** What the database holds: event rows and the events queue's jobs (optionally for one key). */
export async function recorded(
  databaseUrl: string,
  key?: { provider: string; eventId: string },
): Promise<{ events: number; jobs: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const events = key
      ? await client.query(
          'select count(*)::int as n from webhook_events where provider = $1 and event_id = $2',
          [key.provider, key.eventId],
        )
      : await client.query('select count(*)::int as n from webhook_events');
    const jobs = key
      ? await client.query(
          `select count(*)::int as n from pgboss.job where name = $1 and data->>'provider' = $2 and data->>'eventId' = $3`,
          [EVENTS_QUEUE, key.provider, key.eventId],
        )
      : await client.query('select count(*)::int as n from pgboss.job where name = $1', [EVENTS_QUEUE]);
    return { events: (events.rows[0] as { n: number }).n, jobs: (jobs.rows[0] as { n: number }).n };
  } finally {
    await client.end();
  }
}

export async function sql(
  databaseUrl: string,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

export interface HttpResult {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A POST on its own TCP connection (no agent, no keep-alive), like a separate delivery from the provider. */
export function post(
  baseUrl: string,
  delivery: Delivery,
  options: { timeoutMs?: number; method?: string } = {},
): Promise<HttpResult> {
  const url = new URL(delivery.path, baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: options.method ?? 'POST',
        agent: false,
        headers: {
          ...delivery.headers,
          connection: 'close',
          'content-length': Buffer.byteLength(delivery.body),
        },
        timeout: options.timeoutMs ?? 15_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: response.headers,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('request timed out')));
    request.on('error', reject);
    request.end(delivery.body);
  });
}

export async function getStatus(baseUrl: string, path: string): Promise<number> {
  const response = await fetch(new URL(path, baseUrl), { signal: AbortSignal.timeout(5_000) });
  await response.arrayBuffer();
  return response.status;
}

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
/**
 * `node apps/receiver/src/server.ts` as its own process on free ports (public and management), ready once
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
  const child = spawn(process.execPath, [...nodeFlags, SERVER_ENTRY], {
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

/** The fault-injection proxy in front of Postgres (cut, black-hole, restore), shared with the worker's tests. */
export { TcpProxy } from '@webhook-inbox/testing';

/** Group-commit transactions so far, by outcome: how many, and how many of them answered more than one request. */
export async function batchCounts(
  managementUrl: string,
): Promise<Record<'committed' | 'failed' | 'split', { batches: number; multi: number }>> {
  const text = await (await fetch(new URL('/metrics', managementUrl))).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  const counts = (outcome: string) => {
    const batches = value(
      new RegExp(`^webhook_ingest_batch_requests_count\\{outcome="${outcome}"\\} (\\d+)`, 'm'),
    );
    const single = value(
      new RegExp(`^webhook_ingest_batch_requests_bucket\\{le="1",outcome="${outcome}"\\} (\\d+)`, 'm'),
    );
    return { batches, multi: batches - single };
  };
  return { committed: counts('committed'), failed: counts('failed'), split: counts('split') };
}
