import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Principal } from '@webhook-inbox/operator/access/roles';
import { databasePooler, type DatabasePooler } from '@webhook-inbox/env';
import type pg from 'pg';
import type { SourceDefinition } from '@webhook-inbox/providers';
import { UsageError } from './errors.ts';
import type { AdminApi } from './remote.ts';

/**
 * Where the CLI finds things. Explicit environment first (DATABASE_URL, secrets, RECEIVER_URL); otherwise what
 * a running `pnpm start` left in `.data/` (runtime.json: its database and receiver; dev-secrets.json).
 */
export interface CliContext {
  databaseUrl(): string;
  /**
   * The role that owns the tables, for `migrate`: MIGRATION_DATABASE_URL, else a running `pnpm start`'s, else
   * DATABASE_URL (one role for everything).
   */
  migrationDatabaseUrl(): string;
  /** `DATABASE_POOLER`: `transaction` when DATABASE_URL goes through a transaction-mode pooler. */
  databasePooler(): DatabasePooler;
  receiverUrl(): string;
  stripeSecrets(): string[];
  shopifySecrets(): string[];
  /**
   * The sources of `WEBHOOK_SOURCES_FILE`, `STANDARD_WEBHOOKS` and the catalogue's `<TYPE>_WEBHOOK_SECRET`
   * (first secret, and `<TYPE>_WEBHOOK_URL`), as the receiver reads them.
   */
  sources(): Promise<SourceDefinition[]>;
  stripeApiKey(): string | undefined;
  /** Another Stripe API server (stripe-mock, tests); unset: api.stripe.com. */
  stripeApiBase(): string | undefined;
  /**
   * Who the CLI acts as against the database, in the audit log: the OS user at this host (`local_cli`), an admin
   * (whoever holds DATABASE_URL can change any row).
   */
  principal(): Principal;
  /**
   * A remote receiver's admin API when a token is given (`--token`, else `WEBHOOK_INBOX_TOKEN`): its base URL
   * (`--url`, else `WEBHOOK_INBOX_URL`). Undefined: the CLI works on the database.
   */
  adminApi(flags: { url?: string | undefined; token?: string | undefined }): AdminApi | undefined;
  /** `WEBHOOK_INBOX_LISTEN_SECRET`: the `whsec_` secret `listen` signs with, kept across runs; unset: a new one. */
  listenSecret(): string | undefined;
  /** A connection pool, opened on first use (loading the database code then, not at start-up) and closed by `close()`. */
  pool(): Promise<pg.Pool>;
  close(): Promise<void>;
}

interface Runtime {
  databaseUrl?: string;
  migrationDatabaseUrl?: string;
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
  let opened: pg.Pool | undefined;

  const context: CliContext = {
    databaseUrl() {
      const url = env.DATABASE_URL ?? runtime().databaseUrl;
      if (!url)
        throw new UsageError('DATABASE_URL is not set and no `pnpm start` is running in this checkout.');
      return url;
    },
    migrationDatabaseUrl() {
      return env.MIGRATION_DATABASE_URL || runtime().migrationDatabaseUrl || context.databaseUrl();
    },
    databasePooler() {
      // The receiver's and the worker's reading of the variable, so the three agree on what it accepts.
      const parsed = databasePooler.safeParse(env.DATABASE_POOLER);
      if (!parsed.success) throw new UsageError(`DATABASE_POOLER ${parsed.error.issues[0]?.message}`);
      return parsed.data;
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
    async sources() {
      // The catalogue (every provider's schemas) loads here, for `send`, not at each command's start.
      const { CATALOGUE, loadSourcesFile, parseStandardWebhooksEnv, SourcesFileError } =
        await import('@webhook-inbox/providers');
      const fromEnvironment = parseStandardWebhooksEnv(env.STANDARD_WEBHOOKS).map(
        ({ name, secrets }): SourceDefinition => ({
          name,
          secrets,
          type: 'standard-webhooks',
          secretFiles: [],
        }),
      );
      for (const entry of CATALOGUE) {
        const secrets = list(env[entry.envVar]);
        if (secrets.length === 0) continue;
        const url = env[entry.envVar.replace(/_SECRET$/, '_URL')]?.trim() || undefined;
        fromEnvironment.push({ name: entry.type, type: entry.type, secrets, secretFiles: [], url });
      }
      const file = env.WEBHOOK_SOURCES_FILE?.trim();
      if (!file) return fromEnvironment;
      try {
        return [...fromEnvironment, ...loadSourcesFile(path.resolve(cwd, file))];
      } catch (error) {
        if (error instanceof SourcesFileError) throw new UsageError(`WEBHOOK_SOURCES_FILE: ${error.message}`);
        throw error;
      }
    },
    stripeApiKey() {
      return env.STRIPE_API_KEY || undefined;
    },
    stripeApiBase() {
      return env.STRIPE_API_BASE || undefined;
    },
    principal() {
      let user = env.USER ?? 'unknown';
      try {
        user = os.userInfo().username;
      } catch {
        // No passwd entry for this uid (some containers): USER as the shell has it.
      }
      return {
        actor: `${user}@${os.hostname()}`,
        role: 'admin',
        method: 'local_cli',
        groups: null,
        address: null,
      };
    },
    listenSecret() {
      return env.WEBHOOK_INBOX_LISTEN_SECRET || undefined;
    },
    adminApi(flags) {
      const token = flags.token ?? (env.WEBHOOK_INBOX_TOKEN || undefined);
      if (token === undefined) {
        if (flags.url !== undefined)
          throw new UsageError('--url needs a token: --token or WEBHOOK_INBOX_TOKEN');
        return undefined;
      }
      const url = flags.url ?? (env.WEBHOOK_INBOX_URL || undefined);
      if (!url) {
        throw new UsageError(
          "a token needs the remote receiver's admin API: --url or WEBHOOK_INBOX_URL (its management listener)",
        );
      }
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
        throw new UsageError(`--url ${url} is not an http(s) URL`);
      }
      return { url, token };
    },
    async pool() {
      if (!opened) {
        const { createPool } = await import('@webhook-inbox/db');
        opened = createPool({
          connectionString: context.databaseUrl(),
          pooler: context.databasePooler(),
          max: 4,
          applicationName: 'webhook-inbox-cli',
        });
      }
      return opened;
    },
    async close() {
      await opened?.end();
      opened = undefined;
    },
  };
  return context;
}
