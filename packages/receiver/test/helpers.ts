import { randomBytes } from 'node:crypto';
import { EVENTS_QUEUE, ensureQueues } from '@webhook-inbox/inbox';
import { createProviders, signStandardWebhook } from '@webhook-inbox/providers';
import {
  SHOPIFY_SECRET,
  STRIPE_OLD_SECRET,
  STRIPE_SECRET,
  SW_NAME,
  SW_SECRET,
  type Delivery,
  type DeliveryOptions,
} from '@webhook-inbox/scenarios/receiver';
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

export function standardDelivery(options: DeliveryOptions = {}): Delivery {
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
