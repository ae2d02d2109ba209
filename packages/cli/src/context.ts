import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createDb, createPool, type Database } from '@webhook-inbox/db';
import type pg from 'pg';
import { UsageError } from './errors.ts';

/**
 * Where the CLI finds things. Explicit environment first (DATABASE_URL, secrets, RECEIVER_URL); otherwise what
 * a running `pnpm start` left in `.data/` (runtime.json: its database and receiver; dev-secrets.json).
 */
export interface CliContext {
  databaseUrl(): string;
  receiverUrl(): string;
  stripeSecrets(): string[];
  shopifySecrets(): string[];
  stripeApiKey(): string | undefined;
  /** Another Stripe API server (stripe-mock, tests); unset: api.stripe.com. */
  stripeApiBase(): string | undefined;
  /** A pool + Drizzle handle, opened on first use and closed by `close()`. */
  db(): { pool: pg.Pool; db: Database };
  close(): Promise<void>;
}

interface Runtime {
  databaseUrl?: string;
  receiverUrl?: string;
}

function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function createContext(env: NodeJS.ProcessEnv, cwd: string): CliContext {
  const dataDir = path.resolve(cwd, env.WEBHOOK_INBOX_DATA_DIR ?? '.data');
  const runtime = () => readJson<Runtime>(path.join(dataDir, 'runtime.json')) ?? {};
  const devSecrets = () =>
    readJson<{ stripe?: string; shopify?: string }>(path.join(dataDir, 'dev-secrets.json')) ?? {};
  let opened: { pool: pg.Pool; db: Database } | undefined;

  const context: CliContext = {
    databaseUrl() {
      const url = env.DATABASE_URL ?? runtime().databaseUrl;
      if (!url)
        throw new UsageError('DATABASE_URL is not set and no `pnpm start` is running in this checkout.');
      return url;
    },
    receiverUrl() {
      return (
        env.RECEIVER_URL ?? runtime().receiverUrl ?? `http://${env.HOST ?? '127.0.0.1'}:${env.PORT ?? '3000'}`
      );
    },
    stripeSecrets() {
      return list(env.STRIPE_WEBHOOK_SECRET ?? devSecrets().stripe);
    },
    shopifySecrets() {
      return list(env.SHOPIFY_WEBHOOK_SECRET ?? devSecrets().shopify);
    },
    stripeApiKey() {
      return env.STRIPE_API_KEY || undefined;
    },
    stripeApiBase() {
      return env.STRIPE_API_BASE || undefined;
    },
    db() {
      if (!opened) {
        const pool = createPool({
          connectionString: context.databaseUrl(),
          max: 4,
          applicationName: 'webhook-inbox-cli',
        });
        opened = { pool, db: createDb(pool) };
      }
      return opened;
    },
    async close() {
      await opened?.pool.end();
      opened = undefined;
    },
  };
  return context;
}
