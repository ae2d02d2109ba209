/**
 * Packaging checks that need no container engine: docker/Dockerfile, .dockerignore and docker-compose.yml
 * against the code they package (entry points, workspace dependencies, env.ts, ports, shutdown budgets,
 * pinned tool versions). `config` of a real compose implementation runs too when one is installed (the v2
 * plugin, or the standalone `docker-compose`, e.g. Debian bookworm's 1.29.2). And the Node floor, stated alike
 * in the engines, the READMEs and CI. And where the test files live.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import dockerignoreModule from '@balena/dockerignore';
import { INBOX_MIGRATIONS } from '@webhook-inbox/db';
import { SERVICE_VARIABLES } from '@webhook-inbox/env';
import { EXAMPLE_MIGRATIONS } from '@webhook-inbox/worker/migrations';
import {
  DockerfileParser,
  type Arg,
  type Copy as DockerCopy,
  type Env,
  type From,
  type Instruction as DockerInstruction,
} from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig as parseReceiverConfig } from '../packages/receiver/src/config/env.ts';
import { parseConfig as parseWorkerConfig } from '../apps/worker/src/env.ts';
import { requireTool, useTempFiles } from '@webhook-inbox/testing';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
/** The compose test's empty env file, removed after the file's tests (run or skipped). */
const tempFiles = useTempFiles('compose-env-');

// ---- Dockerfile (parsed by dockerfile-ast), grouped into its build stages ------------------------------

interface Instruction {
  keyword: string;
  /** The arguments as written (flags included, line continuations joined). */
  args: string;
  node: DockerInstruction;
}

interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

interface Dockerfile {
  stages: Map<string, Stage>;
}

function parseDockerfile(text: string): Dockerfile {
  const parsed = DockerfileParser.parse(text);
  // ARGs before the first FROM may be used in FROM lines.
  const args = new Map(
    parsed.getInitialARGs().flatMap((arg) => {
      const property = arg.getProperty();
      return property ? [[property.getName(), property.getValue() ?? '']] : [];
    }),
  );
  const stages = new Map<string, Stage>();
  let current: Stage | undefined;
  for (const node of parsed.getInstructions()) {
    const keyword = node.getKeyword();
    if (keyword === 'FROM') {
      const from = node as From;
      const image = (from.getImage() ?? '').replace(
        /\$\{(\w+)\}/g,
        (_, name: string) => args.get(name) ?? '',
      );
      current = { name: from.getBuildStage() ?? `#${stages.size}`, from: image, instructions: [] };
      stages.set(current.name, current);
    } else if (current) {
      current.instructions.push({ keyword, args: node.getArgumentsContent() ?? '', node });
    } else if (keyword !== 'ARG') {
      throw new Error(`${keyword} before the first FROM`);
    }
  }
  return { stages };
}

/** A stage's instructions, its ancestors' first (FROM <another stage>). */
function lineage(dockerfile: Dockerfile, name: string): Instruction[] {
  const stage = dockerfile.stages.get(name);
  if (!stage) throw new Error(`no stage ${name}`);
  const parent = dockerfile.stages.has(stage.from) ? lineage(dockerfile, stage.from) : [];
  return [...parent, ...stage.instructions];
}

/** The image a stage finally builds on (following FROM <stage> links). */
function baseImage(dockerfile: Dockerfile, name: string): string {
  const stage = dockerfile.stages.get(name)!;
  return dockerfile.stages.has(stage.from) ? baseImage(dockerfile, stage.from) : stage.from;
}

function last(instructions: Instruction[], keyword: string): Instruction | undefined {
  return instructions.filter((instruction) => instruction.keyword === keyword).at(-1);
}

/** The value an ARG instruction gives its variable. */
function argValue(instruction: Instruction | undefined): string | undefined {
  return (instruction?.node as Arg | undefined)?.getProperty()?.getValue() ?? undefined;
}

function envOf(instructions: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { node } of instructions.filter((instruction) => instruction.keyword === 'ENV')) {
    for (const property of (node as Env).getProperties()) env[property.getName()] = property.getValue() ?? '';
  }
  return env;
}

/** CMD/ENTRYPOINT/HEALTHCHECK in exec (JSON) form. */
function execForm(args: string): string[] {
  const json = args.replace(/^(?:--\S+\s+)*(?:CMD\s+)?/, '');
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string')) {
    throw new Error(`not an exec-form array: ${args}`);
  }
  return parsed;
}

interface Copy {
  from: string | undefined;
  sources: string[];
  destination: string;
}

function copiesOf(stage: Stage): Copy[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'COPY')
    .map(({ node }) => {
      const copy = node as DockerCopy;
      const parts = copy.getArguments().map((argument) => argument.getValue());
      const destination = parts.pop()!;
      return { from: copy.getFromFlag()?.getValue() ?? undefined, sources: parts, destination };
    });
}

// ---- YAML ----------------------------------------------------------------------------------------------

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

/** YAML 1.2, as Compose v2 reads it; duplicate keys and any other error throw. */
function parseYaml(source: string): Yaml {
  return parse(source, { strict: true, uniqueKeys: true }) as Yaml;
}

// ---- compose helpers -----------------------------------------------------------------------------------

type Mapping = { [key: string]: Yaml };

function isMapping(value: Yaml | undefined): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mappingAt(value: Yaml | undefined, what: string): Mapping {
  if (!isMapping(value)) throw new Error(`${what} is not a mapping`);
  return value;
}

/** A scalar as compose reads it: text. Null is the empty string; a mapping or a sequence throws. */
function text(value: Yaml | undefined, what: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') throw new Error(`${what} is not a scalar`);
  return String(value);
}

/** Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}`. */
function interpolate(value: string, variables: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?:(:?[-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const set = variables[name];
    if (op?.endsWith('?')) {
      if (set === undefined || set === '') throw new Error(`${name}: ${arg}`);
      return set;
    }
    if (op?.endsWith('-')) return set === undefined || (op === ':-' && set === '') ? (arg ?? '') : set;
    return set ?? '';
  });
}

/** `30s`, `1m30s`, `500ms`, `1h` in milliseconds. */
function durationMs(value: Yaml | undefined): number {
  const duration = text(value, 'duration');
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== duration) {
    throw new Error(`not a duration: ${duration}`);
  }
  return parts.reduce((total, part) => total + Number(part[1]) * units[part[2]!]!, 0);
}

/**
 * The schema keys of an env.ts (`  NAME: z...` at the top level of `z.object({...})`), and the variables every
 * service reads (`SERVICE_VARIABLES`) where the schema spreads them in.
 */
function envKeysRead(file: string): Set<string> {
  const text = read(file);
  const own = [...text.matchAll(/^ {2}([A-Z][A-Z0-9_]*): /gm)].map((match) => match[1]!);
  const shared = /^ {2}\.\.\.SERVICE_VARIABLES,$/m.test(text) ? Object.keys(SERVICE_VARIABLES) : [];
  return new Set([...own, ...shared]);
}

function environment(service: Mapping, variables: Record<string, string>): Record<string, string> {
  const env = service.environment;
  if (env === undefined) return {};
  if (!isMapping(env)) throw new Error('use the mapping form of `environment`');
  return Object.fromEntries(
    Object.entries(env).map(([key, value]) => [key, interpolate(text(value, key), variables)]),
  );
}

// ---- fixtures ------------------------------------------------------------------------------------------

const dockerfile = parseDockerfile(read('docker/Dockerfile'));
// Docker's own matching rules (a CommonJS module whose factory is also its `default`).
const dockerignore = dockerignoreModule.default().add(read('.dockerignore'));
/** Whether .dockerignore keeps `file` (a path from the context root) out of the build context. */
const ignored = (file: string) => dockerignore.ignores(file);
const composeText = read('docker-compose.yml');
const compose = mappingAt(parseYaml(composeText), 'docker-compose.yml');
const services = mappingAt(compose.services, 'services');
const service = (name: string) => mappingAt(services[name], `services.${name}`);

/** What a deployer puts in .env: the secrets compose insists on. */
const secrets: Record<string, string> = {
  POSTGRES_PASSWORD: 'packaging-test',
  APP_DATABASE_PASSWORD: 'packaging-test-app',
  STRIPE_WEBHOOK_SECRET: 'whsec_cGFja2FnaW5nLXRlc3Qtc2VjcmV0LXZhbHVl',
  SHOPIFY_WEBHOOK_SECRET: 'shpss_packaging_test',
};

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  packageManager?: string;
}

/** Workspace package name -> its directory (e.g. `@webhook-inbox/db` -> `packages/db`). */
const workspace = new Map<string, string>();
for (const parent of ['apps', 'packages']) {
  for (const dir of readdirSync(path.join(root, parent))) {
    const file = path.join(parent, dir, 'package.json');
    if (existsSync(path.join(root, file)))
      workspace.set((JSON.parse(read(file)) as Manifest).name, `${parent}/${dir}`);
  }
}

/** The workspace packages a package needs at runtime: `dependencies` only, transitively, itself included. */
function runtimeClosure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const manifest = JSON.parse(read(`${workspace.get(name)}/package.json`)) as Manifest;
  for (const [dep, version] of Object.entries(manifest.dependencies ?? {})) {
    if (version.startsWith('workspace:')) runtimeClosure(dep, seen);
  }
  return seen;
}

const apps = [
  {
    target: 'receiver',
    package: '@webhook-inbox/receiver-app',
    dir: 'apps/receiver',
    service: 'receiver',
    hostVar: 'HOST',
    portVar: 'PORT',
    defaults: parseReceiverConfig({ DATABASE_URL: 'postgres://localhost/x' }),
    parse: (env: Record<string, string>) => parseReceiverConfig(env),
    envFile: 'packages/receiver/src/config/env.ts',
  },
  {
    target: 'worker',
    package: '@webhook-inbox/worker',
    dir: 'apps/worker',
    service: 'worker',
    hostVar: 'WORKER_HOST',
    portVar: 'WORKER_PORT',
    defaults: parseWorkerConfig({ DATABASE_URL: 'postgres://localhost/x' }),
    parse: (env: Record<string, string>) => parseWorkerConfig(env),
    envFile: 'apps/worker/src/env.ts',
  },
] as const;

const targets = ['receiver', 'worker', 'migrate'] as const;

// ---- tests ---------------------------------------------------------------------------------------------

describe('docker/Dockerfile', () => {
  it('has the receiver, worker and migrate targets, on a Node slim base of the .nvmrc major', () => {
    const nvmrc = read('.nvmrc').trim().replace(/^v/, '');
    for (const target of targets) {
      expect(dockerfile.stages.has(target), target).toBe(true);
      const image = baseImage(dockerfile, target);
      const tag = /^node:(\d+)[^@]*-slim(?:@sha256:[0-9a-f]{64})?$/.exec(image);
      expect(tag, `${target} builds on ${image}`).not.toBeNull();
      expect(tag![1], `${target}: node major`).toBe(nvmrc.split('.')[0]);
    }
  });

  it('installs the pnpm version of package.json packageManager', () => {
    const manifest = JSON.parse(read('package.json')) as Manifest;
    const wanted = manifest.packageManager?.replace(/^pnpm@/, '').replace(/\+.*$/, '');
    const pnpmStage = [...dockerfile.stages.values()].find((stage) =>
      stage.instructions.some(({ keyword, args }) => keyword === 'RUN' && /pnpm@/.test(args)),
    );
    expect(pnpmStage, 'a stage that installs pnpm').toBeDefined();
    const arg = pnpmStage!.instructions.find(
      ({ keyword, args }) => keyword === 'ARG' && /^PNPM_VERSION=/.test(args),
    );
    const install = pnpmStage!.instructions.find(
      ({ keyword, args }) => keyword === 'RUN' && /pnpm@/.test(args),
    )!;
    const pinned = /pnpm@(\$\{PNPM_VERSION\}|[\d.]+)/.exec(install.args)![1]!;
    const version = pinned === '${PNPM_VERSION}' ? argValue(arg) : pinned;
    expect(version).toBe(wanted);
  });

  it('runs every target as a non-root user, in production, stopped by SIGTERM', () => {
    for (const target of targets) {
      const instructions = lineage(dockerfile, target);
      const user = last(instructions, 'USER')?.args;
      expect(user, `${target} USER`).toBeDefined();
      expect(['root', '0'], `${target} USER`).not.toContain(user!.split(':')[0]);
      // Nothing runs as root after the switch (a RUN after USER would run as that user anyway, but the
      // order says the image is finished when the user changes).
      expect(instructions.findLastIndex((i) => i.keyword === 'USER')).toBeGreaterThan(
        instructions.findLastIndex((i) => i.keyword === 'RUN' || i.keyword === 'COPY'),
      );
      expect(envOf(instructions).NODE_ENV, `${target} NODE_ENV`).toBe('production');
      expect(last(instructions, 'STOPSIGNAL')?.args, `${target} STOPSIGNAL`).toBe('SIGTERM');
    }
  });

  it('starts each target with a command whose file exists (and reaches the build context)', () => {
    for (const target of targets) {
      const instructions = lineage(dockerfile, target);
      const workdir = last(instructions, 'WORKDIR')?.args;
      expect(workdir, `${target} WORKDIR`).toMatch(/^\/app(\/|$)/);
      const repoDir = path.relative('/app', workdir!);
      for (const keyword of ['CMD', 'ENTRYPOINT']) {
        const instruction = last(instructions, keyword);
        if (!instruction) continue;
        const command = execForm(instruction.args);
        if (command[0] !== 'node') continue;
        const script = command.find((part, index) => index > 0 && !part.startsWith('-'))!;
        const file = path.posix.join(repoDir, script);
        expect(existsSync(path.join(root, file)), `${target} ${keyword} ${file}`).toBe(true);
        expect(ignored(file), `${target}: ${file} is excluded by .dockerignore`).toBe(false);
      }
      expect(last(instructions, 'CMD'), `${target} CMD`).toBeDefined();
    }
    expect(execForm(last(lineage(dockerfile, 'migrate'), 'CMD')!.args)).toEqual([
      'node',
      'apps/worker/src/cli/migrate.ts',
    ]);
    for (const app of apps) {
      const manifest = JSON.parse(read(`${app.dir}/package.json`)) as { scripts: Record<string, string> };
      // The image starts the app the way `pnpm --filter <app> start` does.
      expect(execForm(last(lineage(dockerfile, app.target), 'CMD')!.args).join(' ')).toBe(
        manifest.scripts.start,
      );
      expect(last(lineage(dockerfile, app.target), 'WORKDIR')?.args).toBe(`/app/${app.dir}`);
    }
  });

  it('installs each app with its workspace dependencies and ships all of them, outside node_modules', () => {
    for (const [target, pkg] of [
      ['receiver', '@webhook-inbox/receiver-app'],
      ['worker', '@webhook-inbox/worker'],
      ['migrate', '@webhook-inbox/worker'],
    ] as const) {
      const stage = dockerfile.stages.get(target)!;
      const copies = copiesOf(stage);
      const buildStages = new Set(copies.map((copy) => copy.from).filter((from) => from !== undefined));
      expect(buildStages.size, `${target} copies from one build stage`).toBe(1);
      const build = [...buildStages][0]!;
      const install = lineage(dockerfile, build).find(
        ({ keyword, args }) => keyword === 'RUN' && /pnpm install/.test(args),
      );
      expect(install, `${build} runs pnpm install`).toBeDefined();
      expect(install!.args).toContain('--frozen-lockfile');
      expect(install!.args).toContain('--prod');
      expect(install!.args).toMatch(new RegExp(`--filter-prod[ =]"?${pkg.replace('/', '\\/')}\\.\\.\\."?`));
      expect(install!.args, 'pnpm deploy copies workspace packages under node_modules').not.toMatch(
        /\bdeploy\b/,
      );

      const shipped = copies.filter((copy) => copy.from === build).flatMap((copy) => copy.sources);
      expect(shipped).toContain('/app/node_modules');
      for (const dep of runtimeClosure(pkg)) {
        expect(shipped, `${target} ships ${dep}`).toContain(`/app/${workspace.get(dep)}`);
      }
    }
    // The migrations are read relative to the modules that own them (packages/db/src/migrate.ts,
    // apps/worker/src/migrations.ts): the migrate image ships the top-level drizzle/ beside them.
    const migrateShips = copiesOf(dockerfile.stages.get('migrate')!).flatMap((copy) => copy.sources);
    for (const folder of [INBOX_MIGRATIONS.folder, EXAMPLE_MIGRATIONS.folder]) {
      const inRepo = path.relative(root, folder);
      expect(inRepo.split(path.sep)[0]).toBe('drizzle');
      expect(migrateShips).toContain(`/app/${inRepo.split(path.sep)[0]}`);
    }
    expect(migrateShips).toContain('/app/apps/worker');
    expect(migrateShips).toContain('/app/packages/db');
  });

  it('checks health on the port and host the apps really use', () => {
    for (const app of apps) {
      const instructions = lineage(dockerfile, app.target);
      const env = envOf(instructions);
      const healthcheck = last(instructions, 'HEALTHCHECK');
      expect(healthcheck, `${app.target} HEALTHCHECK`).toBeDefined();
      const script = execForm(healthcheck!.args).join(' ');
      const port = /process\.env\.(\w+) \|\| (\d+)/.exec(script);
      expect(port, `${app.target} healthcheck reads its port from the environment`).not.toBeNull();
      expect(port![1]).toBe(app.portVar);
      expect(Number(port![2]), `${app.target} healthcheck default port`).toBe(app.defaults.port);
      expect(script).toContain('/healthz');
      expect(Number(env[app.portVar] ?? app.defaults.port)).toBe(app.defaults.port);
      const exposed = last(instructions, 'EXPOSE')?.args.split(/\s+/);
      expect(exposed).toContain(String(app.defaults.port));
      if ('managementPort' in app.defaults) {
        // The receiver's management listener: reachable by the orchestrator and Prometheus, never published.
        expect(exposed).toContain(String(app.defaults.managementPort));
        expect(env.MANAGEMENT_HOST, `${app.target} MANAGEMENT_HOST`).toBe('0.0.0.0');
      }
      // The apps default to 127.0.0.1, unreachable from outside a container.
      expect(env[app.hostVar], `${app.target} ${app.hostVar}`).toBe('0.0.0.0');
      // Every variable the image sets is one the app reads.
      const known = envKeysRead(app.envFile);
      for (const key of Object.keys(env)) expect(known, `${app.target} ENV ${key}`).toContain(key);
    }
  });
});

describe('.dockerignore', () => {
  it('keeps secrets, local state and installed modules out of the build context', () => {
    for (const file of [
      '.env',
      '.env.production',
      'apps/worker/.env',
      '.git/HEAD',
      '.data/dev-secrets.json',
      'node_modules/pg/package.json',
      'apps/receiver/node_modules/pg/package.json',
      'packages/db/node_modules/pg/package.json',
      'apps/worker/test/effects.test.ts',
      'packages/inbox/test/ingest.test.ts',
    ]) {
      expect(ignored(file), file).toBe(true);
    }
  });

  it('sends what the images are built from', () => {
    const needed = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'];
    for (const dir of workspace.values()) needed.push(`${dir}/package.json`);
    for (const dir of [
      'apps/receiver/src',
      'packages/receiver/src',
      'apps/worker/src',
      'packages/db/src',
      'packages/inbox/src',
      'packages/operator/src',
    ]) {
      for (const file of readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })) {
        if (file.endsWith('.ts') && !file.endsWith('.test.ts')) needed.push(`${dir}/${file}`);
      }
    }
    for (const dir of ['drizzle/inbox', 'drizzle/example']) {
      for (const file of readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })) {
        needed.push(`${dir}/${file}`);
      }
    }
    const excluded = needed.filter((file) => ignored(file));
    expect(excluded).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  it('has the four services, and reads the same to PyYAML (docker-compose 1.x) when it is installed', (context) => {
    expect(Object.keys(services).sort()).toEqual(['migrate', 'postgres', 'receiver', 'worker']);
    // PyYAML reads YAML 1.1, where an unquoted `no` (restart: no) is a boolean: one file, two meanings.
    const python = spawnSync(
      'python3',
      ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
      { input: composeText, encoding: 'utf8' },
    );
    if (!requireTool('python3 with PyYAML', python.status === 0, 'apt-get install python3-yaml')) {
      context.skip('python3 with PyYAML is not available: read as YAML 1.2 only');
      return;
    }
    expect(JSON.parse(python.stdout) as unknown).toEqual(compose);
  });

  it('runs postgres:17 with a health check and a volume', () => {
    const postgres = service('postgres');
    expect(postgres.image).toBe('postgres:17');
    const healthcheck = mappingAt(postgres.healthcheck, 'postgres.healthcheck');
    expect(JSON.stringify(healthcheck.test)).toContain('pg_isready');
    const volumes = postgres.volumes as string[];
    const named = volumes
      .map((volume) => volume.split(':'))
      .find(([, target]) => target === '/var/lib/postgresql/data');
    expect(named, 'a volume on /var/lib/postgresql/data').toBeDefined();
    expect(Object.keys(mappingAt(compose.volumes, 'volumes'))).toContain(named![0]);
    expect(String(environment(postgres, secrets).POSTGRES_PASSWORD)).toBe(secrets.POSTGRES_PASSWORD);
  });

  it('migrates once, after postgres is healthy, before the apps start', () => {
    const migrate = service('migrate');
    expect(migrate.restart).toBe('no');
    expect(mappingAt(migrate.build, 'migrate.build').target).toBe('migrate');
    expect(
      mappingAt(mappingAt(migrate.depends_on, 'migrate.depends_on').postgres, 'postgres').condition,
    ).toBe('service_healthy');
    for (const app of apps) {
      const dependsOn = mappingAt(service(app.service).depends_on, `${app.service}.depends_on`);
      expect(mappingAt(dependsOn.migrate, 'migrate').condition, app.service).toBe(
        'service_completed_successfully',
      );
      const build = mappingAt(service(app.service).build, `${app.service}.build`);
      expect(build.target).toBe(app.target);
      expect(build.dockerfile).toBe('docker/Dockerfile');
      expect(
        existsSync(path.join(root, text(build.context, 'context'), text(build.dockerfile, 'dockerfile'))),
      ).toBe(true);
    }
  });

  it('points every DATABASE_URL at the postgres service, as the application role; only migrate has the owner', () => {
    const postgres = environment(service('postgres'), secrets);
    const at = (value: string | undefined, name: string) => {
      const url = new URL(value!);
      expect(url.hostname, name).toBe('postgres');
      expect(url.port || '5432').toBe('5432');
      expect(url.pathname).toBe(`/${postgres.POSTGRES_DB}`);
      return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
    };
    for (const name of ['migrate', 'receiver', 'worker']) {
      const env = environment(service(name), secrets);
      expect(at(env.DATABASE_URL, name)).toEqual({
        user: 'webhook_inbox_app',
        password: secrets.APP_DATABASE_PASSWORD,
      });
      expect(env.MIGRATION_DATABASE_URL === undefined, name).toBe(name !== 'migrate');
    }
    const owner = environment(service('migrate'), secrets).MIGRATION_DATABASE_URL;
    expect(at(owner, 'migrate')).toEqual({
      user: postgres.POSTGRES_USER,
      password: postgres.POSTGRES_PASSWORD,
    });
  });

  it('refuses to start without the secrets', () => {
    for (const name of [
      'POSTGRES_PASSWORD',
      'APP_DATABASE_PASSWORD',
      'STRIPE_WEBHOOK_SECRET',
      'SHOPIFY_WEBHOOK_SECRET',
    ]) {
      expect(composeText, name).toMatch(new RegExp(`\\$\\{${name}:\\?[^}]+\\}`));
      const { [name]: _, ...without } = secrets;
      const user = name === 'POSTGRES_PASSWORD' ? 'migrate' : 'receiver';
      expect(() => environment(service(user), without), name).toThrow(name);
    }
  });

  it('sets only variables the apps read, and everything they require', () => {
    for (const app of apps) {
      const env = environment(service(app.service), secrets);
      const known = envKeysRead(app.envFile);
      for (const key of Object.keys(env)) expect(known, `${app.service}: ${key}`).toContain(key);

      // What the container sees: the image's ENV, then compose's environment.
      const container = { ...envOf(lineage(dockerfile, app.target)), ...env };
      const config = app.parse(container);
      expect(config.production, `${app.service} runs with NODE_ENV=production`).toBe(true);
      expect(config.port).toBe(app.defaults.port);
      // The variables the app cannot start without (in production) are all set. Found by starting from an
      // empty production environment and filling in what parseConfig names, until it accepts.
      const required = new Set<string>();
      const probe: Record<string, string> = { NODE_ENV: 'production' };
      for (let round = 0; round < 10; round++) {
        try {
          app.parse(probe);
          break;
        } catch (error) {
          const names = (error as { issues: string[] }).issues.map((issue) => issue.split(' ')[0]!);
          for (const name of names) {
            expect(probe[name], `${name} was set and still refused`).toBeUndefined();
            required.add(name);
            probe[name] = name === 'DATABASE_URL' ? 'postgres://localhost/x' : (secrets[name] ?? 'x');
          }
        }
      }
      expect(required.size, `${app.service}: some variable is required`).toBeGreaterThan(0);
      for (const name of required) expect(Object.keys(container), `${app.service} ${name}`).toContain(name);
    }
    expect(environment(service('receiver'), secrets).STRIPE_WEBHOOK_SECRET).toBe(
      secrets.STRIPE_WEBHOOK_SECRET,
    );

    const migrateReads = new Set(
      [...read('packages/db/src/cli/migrate-command.ts').matchAll(/process\.env\.(\w+)/g)].map(
        (match) => match[1]!,
      ),
    );
    expect(migrateReads).toContain('DATABASE_URL');
    for (const key of Object.keys(environment(service('migrate'), secrets))) {
      expect(migrateReads, `migrate: ${key}`).toContain(key);
    }
  });

  it('checks health on the apps ports and publishes the receiver', () => {
    for (const app of apps) {
      const definition = service(app.service);
      const env = { ...envOf(lineage(dockerfile, app.target)), ...environment(definition, secrets) };
      const port = app.parse(env).port;
      const test = mappingAt(definition.healthcheck, `${app.service}.healthcheck`).test;
      const command = Array.isArray(test)
        ? test.map((part) => text(part, 'test')).join(' ')
        : text(test, 'test');
      expect(command).toContain(`127.0.0.1:${port}/healthz`);
    }
    const receiverPort = parseReceiverConfig({
      ...envOf(lineage(dockerfile, 'receiver')),
      ...environment(service('receiver'), secrets),
    }).port;
    const published = (service('receiver').ports as string[]).map((mapping) => mapping.split(':').at(-1));
    expect(published).toContain(String(receiverPort));
  });

  it('waits longer than the apps take to stop', () => {
    // The receiver waits SHUTDOWN_TIMEOUT_MS for requests, then up to this long for pg-boss.
    const bossStop = /boss\.stop\(\{[^}]*timeout: ([\d_]+)/.exec(read('packages/receiver/src/receiver.ts'));
    expect(bossStop, 'the receiver bounds its pg-boss stop').not.toBeNull();
    const budgets = {
      receiver: (env: Record<string, string>) =>
        parseReceiverConfig(env).shutdownTimeoutMs + Number(bossStop![1]!.replace(/_/g, '')),
      worker: (env: Record<string, string>) => parseWorkerConfig(env).shutdownTimeoutMs,
    };
    for (const app of apps) {
      const definition = service(app.service);
      const env = { ...envOf(lineage(dockerfile, app.target)), ...environment(definition, secrets) };
      const budget = budgets[app.service](env);
      // 5 s for the rest: closing pools, the mail transport, flushing logs.
      expect(
        durationMs(definition.stop_grace_period),
        `${app.service} stop_grace_period`,
      ).toBeGreaterThanOrEqual(budget + 5_000);
    }
  });

  it('lets the worker scale', () => {
    const worker = service('worker');
    expect(worker.container_name, 'a fixed container name cannot be scaled').toBeUndefined();
    // A published host port would collide between replicas.
    expect(worker.ports).toBeUndefined();
    expect(mappingAt(worker.deploy, 'worker.deploy').replicas).toEqual(expect.any(Number));
  });
});

// ---- a real compose implementation: Compose v2 (`docker compose`) or the standalone `docker-compose` ------

interface ComposeTool {
  command: string;
  prefix: string[];
  label: string;
  /** v2 prints `config --format json`; v1 (1.29) prints YAML only. */
  json: boolean;
}

function findCompose(): ComposeTool | undefined {
  const plugin = spawnSync('docker', ['compose', 'version', '--short'], { encoding: 'utf8' });
  if (plugin.status === 0) {
    return {
      command: 'docker',
      prefix: ['compose'],
      label: `docker compose ${plugin.stdout.trim()}`,
      json: true,
    };
  }
  const standalone = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
  if (standalone.status === 0) {
    const version = standalone.stdout.trim();
    return {
      command: 'docker-compose',
      prefix: [],
      label: `docker-compose ${version}`,
      json: Number(version.replace(/^v/, '').split('.')[0]) >= 2,
    };
  }
  return undefined;
}

const composeTool = findCompose();

describe.runIf(
  requireTool(
    'docker-compose',
    composeTool !== undefined,
    'neither `docker compose` nor `docker-compose`: apt-get install docker-compose',
  ),
)(
  composeTool
    ? `docker-compose.yml through ${composeTool.label}`
    : 'docker-compose.yml through a compose implementation',
  () => {
    const tool = composeTool!;
    // Only what the test sets: no variable the file interpolates (nor COMPOSE_*) comes from the developer's
    // shell, and an empty env file stands in for a local .env.
    const referenced = new Set([...composeText.matchAll(/\$\{(\w+)/g)].map((match) => match[1]!));
    const baseEnv = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !referenced.has(key) && !key.startsWith('COMPOSE_') && key !== 'DATABASE_URL',
      ),
    );
    const envFile = tempFiles.write('empty.env', '');

    function compose(args: string[], variables: Record<string, string> = secrets) {
      return spawnSync(
        tool.command,
        [...tool.prefix, '--env-file', envFile, '-f', 'docker-compose.yml', ...args],
        { cwd: root, env: { ...baseEnv, ...variables }, encoding: 'utf8', timeout: 60_000 },
      );
    }

    let resolved: Mapping | undefined;
    /** `config`: the file as compose resolves it (interpolated, normalised). */
    function resolvedConfig(): Mapping {
      if (resolved) return resolved;
      const result = compose(tool.json ? ['config', '--format', 'json'] : ['config']);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      // docker-compose 1.x prints YAML only (PyYAML's, which quotes any string YAML 1.1 would read otherwise).
      const config = tool.json ? (JSON.parse(result.stdout) as Yaml) : parseYaml(result.stdout);
      resolved = mappingAt(config, 'config');
      return resolved;
    }
    const resolvedService = (name: string) =>
      mappingAt(mappingAt(resolvedConfig().services, 'services')[name], `services.${name}`);
    const condition = (name: string, dependency: string) =>
      mappingAt(mappingAt(resolvedService(name).depends_on, `${name}.depends_on`)[dependency], dependency)
        .condition;

    it('accepts the file (`config --quiet`) without a warning', () => {
      const result = compose(['config', '--quiet']);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    });

    it('lists the four services (`config --services`)', () => {
      const result = compose(['config', '--services']);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.trim().split('\n').sort()).toEqual(['migrate', 'postgres', 'receiver', 'worker']);
    });

    it('refuses to resolve the file while a secret is unset, and names it', () => {
      for (const name of [
        'POSTGRES_PASSWORD',
        'APP_DATABASE_PASSWORD',
        'STRIPE_WEBHOOK_SECRET',
        'SHOPIFY_WEBHOOK_SECRET',
      ]) {
        const { [name]: _, ...without } = secrets;
        const result = compose(['config', '--quiet'], without);
        expect(result.status, name).not.toBe(0);
        expect(result.stderr, name).toContain(name);
      }
    });

    it('resolves the start order: postgres healthy, then migrate completed, then the apps', () => {
      expect(Object.keys(mappingAt(resolvedConfig().services, 'services')).sort()).toEqual([
        'migrate',
        'postgres',
        'receiver',
        'worker',
      ]);
      expect(resolvedService('postgres').depends_on).toBeUndefined();
      expect(condition('migrate', 'postgres')).toBe('service_healthy');
      expect(resolvedService('migrate').restart).toBe('no');
      for (const app of apps) {
        expect(condition(app.service, 'postgres'), app.service).toBe('service_healthy');
        expect(condition(app.service, 'migrate'), app.service).toBe('service_completed_successfully');
      }
    });

    it('resolves the health checks, builds, secrets and ports', () => {
      const postgres = resolvedService('postgres');
      expect(JSON.stringify(mappingAt(postgres.healthcheck, 'postgres.healthcheck').test)).toContain(
        'pg_isready',
      );
      expect(mappingAt(postgres.environment, 'postgres.environment').POSTGRES_PASSWORD).toBe(
        secrets.POSTGRES_PASSWORD,
      );
      for (const name of ['migrate', 'receiver', 'worker']) {
        const definition = resolvedService(name);
        const build = mappingAt(definition.build, `${name}.build`);
        expect(path.resolve(text(build.context, 'context')), name).toBe(path.resolve(root));
        expect(build.dockerfile, name).toBe('docker/Dockerfile');
        expect(build.target, name).toBe(name);
        const url = new URL(text(mappingAt(definition.environment, name).DATABASE_URL, 'DATABASE_URL'));
        expect(url.password, name).toBe(secrets.APP_DATABASE_PASSWORD);
      }
      const owner = mappingAt(resolvedService('migrate').environment, 'migrate').MIGRATION_DATABASE_URL;
      expect(new URL(text(owner, 'MIGRATION_DATABASE_URL')).password).toBe(secrets.POSTGRES_PASSWORD);
      for (const app of apps) {
        const definition = resolvedService(app.service);
        const healthcheck = mappingAt(definition.healthcheck, `${app.service}.healthcheck`);
        expect(JSON.stringify(healthcheck.test)).toContain(`127.0.0.1:${app.defaults.port}/healthz`);
        expect(healthcheck.disable ?? false).toBe(false);
        for (const key of ['interval', 'timeout', 'start_period']) {
          expect(durationMs(healthcheck[key]), `${app.service} healthcheck.${key}`).toBeGreaterThan(0);
        }
        expect(definition.init, `${app.service} init`).toBe(true);
      }
      const receiver = resolvedService('receiver');
      const receiverEnv = mappingAt(receiver.environment, 'receiver.environment');
      expect(receiverEnv.STRIPE_WEBHOOK_SECRET).toBe(secrets.STRIPE_WEBHOOK_SECRET);
      expect(receiverEnv.SHOPIFY_WEBHOOK_SECRET).toBe(secrets.SHOPIFY_WEBHOOK_SECRET);
      // v1 prints `published: 3000`, v2 `published: "3000"` (with mode and protocol).
      const ports = (receiver.ports as Mapping[]).map(
        (port) => `${text(port.published, 'published')}:${text(port.target, 'target')}`,
      );
      expect(ports).toEqual(['3000:3000']);
      expect(resolvedService('worker').ports).toBeUndefined();
      expect(mappingAt(resolvedService('worker').deploy, 'worker.deploy').replicas).toBe(2);
      expect(Object.keys(mappingAt(resolvedConfig().volumes, 'volumes')).sort()).toEqual(['mail', 'pgdata']);
    });
  },
);

describe('the Node floor', () => {
  // 22.18 is the first Node 22 that strips types without a flag: every script of the workspace and a team's own
  // `.ts` files need it (22.12 and 22.17 fail with ERR_UNKNOWN_FILE_EXTENSION).
  it('is one version everywhere: the engines, both READMEs, the CI check', () => {
    const engines = (file: string) =>
      (JSON.parse(read(file)) as { engines?: { node?: string } }).engines?.node;
    expect(engines('package.json')).toBe('>=22.18');
    for (const dir of ['packages/db', 'packages/inbox', 'packages/cli']) {
      expect(engines(`${dir}/package.json`), dir).toBe('>=22.18');
    }
    expect(read('README.md')).toContain('Node.js 22.18 or newer');
    expect(read('packages/inbox/README.md')).toContain('Node.js 22.18 or newer');
    expect(read('.ci/run')).toContain('a > 22 || (a === 22 && b >= 18)');
  });
});

describe('where the tests live', () => {
  // vitest.config.ts runs the test files of the test/ folders only (CONTRIBUTING.md): one under src/ would never run.
  it('puts every test file of the workspace in a test/ folder', () => {
    const misplaced = [...workspace.values()].flatMap((dir) =>
      existsSync(path.join(root, dir, 'src'))
        ? readdirSync(path.join(root, dir, 'src'), { recursive: true, encoding: 'utf8' })
            .filter((file) => file.endsWith('.test.ts'))
            .map((file) => `${dir}/src/${file}`)
        : [],
    );
    expect(misplaced).toEqual([]);
  });
});
