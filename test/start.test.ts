import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findFreePorts } from '@webhook-inbox/testing/embedded';
import { waitFor } from '@webhook-inbox/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
// Not mkdtemp: as root, Postgres runs as the `postgres` user, which must be able to enter the parent dir.
const dataDir = path.join(os.tmpdir(), `webhook-inbox-start-${randomBytes(4).toString('hex')}`);

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function postgresProcesses(): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(dataDir) && /postgres/.test(line));
}

async function startOnce(
  extraEnv: Record<string, string> = {},
): Promise<{ output: () => string; stop: () => Promise<number | null> }> {
  const {
    DATABASE_URL: _,
    STRIPE_WEBHOOK_SECRET: _s,
    SHOPIFY_WEBHOOK_SECRET: _h,
    ADMIN_TOKEN: _a,
    ADMIN_LISTENER: _l,
    ...env
  } = process.env;
  const [port, workerPort, managementPort] = await findFreePorts(3);
  const child = spawn(process.execPath, ['scripts/start.ts'], {
    cwd: root,
    env: {
      ...env,
      WEBHOOK_INBOX_DATA_DIR: dataDir,
      PORT: String(port),
      WORKER_PORT: String(workerPort),
      MANAGEMENT_PORT: String(managementPort),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A fresh PostgreSQL cluster (initdb), migrations and two apps: slow on a loaded two-core machine.
  await waitFor(() => output.includes('ready (Ctrl-C to stop)') || child.exitCode !== null, {
    timeout: 120_000,
    message: '`pnpm start` ready',
  });
  expect(child.exitCode, output).toBeNull();
  return {
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      return exit;
    },
  };
}

describe('pnpm start', () => {
  it('starts the embedded PostgreSQL, migrates, and stops cleanly on SIGTERM leaving no postgres behind', async () => {
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
    const first = await startOnce();
    expect(first.output()).toMatch(/STRIPE_WEBHOOK_SECRET=whsec_/);
    // The console's URL and a dev sign-in that works: the generated admin token is the receiver's.
    const signIn =
      /console: (http:\/\/127\.0\.0\.1:\d+\/console\/) \(sign in with the dev token (dev_\S+)\)/.exec(
        first.output(),
      );
    expect(signIn, first.output()).not.toBeNull();
    const [, consoleUrl, devToken] = signIn!;
    expect(first.output()).toContain(`ADMIN_TOKEN=${devToken} (dev, generated)`);
    // "ready" means started: the receiver may still be binding its listeners.
    const page = await waitFor(
      async () => {
        const response = await fetch(new URL('login', consoleUrl));
        return response.status === 200 && response;
      },
      { timeout: 60_000, message: 'the console answering' },
    );
    expect(await page.text()).toContain('name="token"');
    const admin = await fetch(new URL('/admin/events', consoleUrl), {
      headers: { authorization: `Bearer ${devToken}` },
    });
    expect(admin.status).toBe(200);
    // The apps connect as the application's role, which owns nothing; the superuser only migrated (it used to be
    // the apps' role too). runtime.json holds the application's URL, for the CLI.
    const runtime = JSON.parse(await readFile(path.join(dataDir, 'runtime.json'), 'utf8')) as {
      databaseUrl: string;
    };
    expect(new URL(runtime.databaseUrl).username).toBe('webhook_inbox_app');
    const client = new pg.Client({ connectionString: runtime.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ role: string; superuser: boolean }>(
        `select distinct a.usename as role, r.rolsuper as superuser
           from pg_stat_activity a join pg_roles r on r.rolname = a.usename
          where a.datname = current_database() and a.pid <> pg_backend_pid()`,
      );
      expect(rows).toEqual([{ role: 'webhook_inbox_app', superuser: false }]);
    } finally {
      await client.end();
    }
    expect(postgresProcesses().length).toBeGreaterThan(0);
    expect(await first.stop()).toBe(0);
    expect(first.output()).toContain('stopped');
    expect(postgresProcesses()).toEqual([]);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // Data and dev secrets survive a restart. A secret given by the operator is used but never printed:
    // only the generated dev secrets are.
    const secrets = await readFile(path.join(dataDir, 'dev-secrets.json'), 'utf8');
    const operatorSecret = 'whsec_from_the_operator_not_to_be_printed';
    const operatorToken = 'operator_admin_token_not_to_be_printed';
    const second = await startOnce({ STRIPE_WEBHOOK_SECRET: operatorSecret, ADMIN_TOKEN: operatorToken });
    const { shopify } = JSON.parse(secrets) as { shopify: string };
    expect(second.output()).toContain(`SHOPIFY_WEBHOOK_SECRET=${shopify} (dev, generated)`);
    expect(second.output()).toContain('STRIPE_WEBHOOK_SECRET: from the environment');
    expect(second.output()).toContain('ADMIN_TOKEN: from the environment');
    expect(second.output()).toMatch(/console: http:\/\/\S+\/console\/ \(sign in with your ADMIN_TOKEN\)/);
    expect(second.output()).not.toContain(operatorSecret);
    expect(second.output()).not.toContain(operatorToken);
    expect(await second.stop()).toBe(0);
    expect(postgresProcesses()).toEqual([]);
  }, 300_000);
});
