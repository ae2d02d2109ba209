/**
 * Packaging checks that need no container engine: docker/Dockerfile, .dockerignore and docker-compose.yml
 * against the code they package (entry points, workspace dependencies, env.ts, ports, shutdown budgets,
 * pinned tool versions). `config` of a real compose implementation runs too when one is installed (the v2
 * plugin, or the standalone `docker-compose`, e.g. Debian bookworm's 1.29.2).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS_FOLDER } from '@webhook-inbox/db';
import { describe, expect, it } from 'vitest';
import { parseConfig as parseReceiverConfig } from '../apps/receiver/src/env.ts';
import { parseConfig as parseWorkerConfig } from '../apps/worker/src/env.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

// ---- Dockerfile ---------------------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

interface Dockerfile {
  args: Map<string, string>;
  stages: Map<string, Stage>;
}

function parseDockerfile(text: string): Dockerfile {
  const args = new Map<string, string>();
  const stages = new Map<string, Stage>();
  let current: Stage | undefined;
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n');
  for (const line of logical) {
    const match = /^\s*([A-Za-z]+)\s+(.*?)\s*$/.exec(line);
    if (!match) continue;
    const keyword = match[1]!.toUpperCase();
    const rest = match[2]!;
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!from) throw new Error(`unreadable FROM: ${line}`);
      const image = from[1]!.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? '');
      current = { name: from[2] ?? `#${stages.size}`, from: image, instructions: [] };
      stages.set(current.name, current);
    } else if (!current && keyword === 'ARG') {
      const [name, value = ''] = rest.split('=');
      args.set(name!, value);
    } else if (current) {
      current.instructions.push({ keyword, args: rest });
    } else {
      throw new Error(`instruction before the first FROM: ${line}`);
    }
  }
  return { args, stages };
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

function envOf(instructions: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of instructions.filter((instruction) => instruction.keyword === 'ENV')) {
    for (const match of args.matchAll(/(\w+)=("[^"]*"|\S+)/g))
      env[match[1]!] = match[2]!.replace(/^"|"$/g, '');
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
    .map(({ args }) => {
      const parts = args.split(/\s+/);
      let from: string | undefined;
      while (parts[0]?.startsWith('--')) {
        const flag = parts.shift()!;
        if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
      }
      const destination = parts.pop()!;
      return { from, sources: parts, destination };
    });
}

// ---- .dockerignore (Docker's rules: patterns from the context root, `**` any depth, last match wins) ----

function compileIgnorePattern(pattern: string): RegExp {
  const segments = pattern.replace(/^\/+|\/+$/g, '').split('/');
  const source = segments
    .map((segment, index) => {
      const isLast = index === segments.length - 1;
      if (segment === '**') return isLast ? '.*' : '(?:[^/]+/)*';
      const body = segment
        .replace(/[.+^${}()|\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]');
      return isLast ? body : `${body}/`;
    })
    .join('');
  return new RegExp(`^${source}$`);
}

function dockerIgnore(text: string): (file: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => ({ negated: line.startsWith('!'), re: compileIgnorePattern(line.replace(/^!/, '')) }));
  return (file) => {
    // Excluding a directory excludes what is in it.
    const parts = file.split('/');
    const candidates = parts.map((_, index) => parts.slice(0, index + 1).join('/'));
    let excluded = false;
    for (const rule of rules)
      if (candidates.some((candidate) => rule.re.test(candidate))) excluded = !rule.negated;
    return excluded;
  };
}

// ---- YAML: the block subset a compose file uses (no anchors, tags or block scalars: those throw) --------

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

interface Line {
  indent: number;
  text: string;
  number: number;
}

function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return line.slice(0, i);
    }
  }
  return line;
}

/** Splits at `sep` outside quotes and brackets. */
function splitOutside(text: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '[' || char === '{') depth++;
    else if (char === ']' || char === '}') depth--;
    else if (depth === 0 && text.startsWith(sep, i)) {
      parts.push(text.slice(start, i));
      start = i + sep.length;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** Open `[` minus closed `]`, outside quoted strings. */
function bracketDepth(text: string): number {
  let depth = 0;
  for (const char of text.replace(/'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"/g, '')) {
    if (char === '[') depth++;
    else if (char === ']') depth--;
  }
  return depth;
}

function scalar(raw: string, where: number): Yaml {
  const text = raw.trim();
  if (text.startsWith('[')) {
    if (!text.endsWith(']')) throw new Error(`line ${where}: unterminated flow sequence`);
    const inner = text.slice(1, -1).trim();
    if (inner === '') return [];
    return splitOutside(inner, ',')
      .map((item) => item.trim())
      .filter((item, index, all) => item !== '' || index < all.length - 1)
      .map((item) => scalar(item, where));
  }
  if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) throw new Error(`line ${where}: bad single-quoted string`);
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (/^[&*!|>{%@`]/.test(text)) throw new Error(`line ${where}: unsupported YAML: ${text}`);
  if (text === '' || text === '~' || text === 'null') return null;
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

function parseYaml(source: string): Yaml {
  const lines: Line[] = [];
  const raw = source.split('\n');
  for (let i = 0; i < raw.length; i++) {
    let text = stripComment(raw[i]!).trimEnd();
    if (text.trim() === '') continue;
    if (text.trim() === '---') continue;
    const number = i + 1;
    // A flow sequence spread over several lines (as Prettier writes long ones) becomes one line.
    while (bracketDepth(text) > 0 && i + 1 < raw.length) text += ` ${stripComment(raw[++i]!).trim()}`;
    const indent = text.length - text.trimStart().length;
    if (text.slice(0, indent).includes('\t')) throw new Error(`line ${number}: tab indentation`);
    lines.push({ indent, text: text.trim(), number });
  }
  let position = 0;

  const isItem = (line: Line) => line.text === '-' || line.text.startsWith('- ');

  function block(indent: number): Yaml {
    const first = lines[position];
    if (!first || first.indent < indent) return null;
    if (first.text.startsWith('[')) {
      position++;
      return scalar(first.text, first.number);
    }
    return isItem(first) ? sequence(first.indent) : mapping(first.indent);
  }

  function sequence(indent: number): Yaml[] {
    const items: Yaml[] = [];
    while (lines[position]?.indent === indent && isItem(lines[position]!)) {
      const line = lines[position]!;
      const rest = line.text.slice(1).trim();
      if (rest === '') {
        position++;
        items.push(block(indent + 1));
      } else if (splitOutside(rest, ': ').length > 1 || rest.endsWith(':')) {
        // `- key: value`: a mapping whose first key sits after the dash.
        lines[position] = { indent: indent + 2, text: rest, number: line.number };
        items.push(mapping(indent + 2));
      } else {
        position++;
        items.push(scalar(rest, line.number));
      }
    }
    return items;
  }

  function mapping(indent: number): { [key: string]: Yaml } {
    const result: { [key: string]: Yaml } = {};
    while (lines[position]?.indent === indent && !isItem(lines[position]!)) {
      const line = lines[position]!;
      const parts = line.text.endsWith(':') ? [line.text.slice(0, -1), ''] : splitOutside(line.text, ': ');
      if (parts.length < 2) throw new Error(`line ${line.number}: expected "key: value": ${line.text}`);
      const key = text(scalar(parts[0]!, line.number), `line ${line.number} key`);
      const value = parts.slice(1).join(': ').trim();
      if (key in result) throw new Error(`line ${line.number}: duplicate key ${key}`);
      position++;
      if (value !== '') {
        result[key] = scalar(value, line.number);
      } else {
        const next = lines[position];
        // A sequence may sit at the key's own indentation.
        result[key] =
          next && (next.indent > indent || (next.indent === indent && isItem(next)))
            ? block(next.indent)
            : null;
      }
    }
    return result;
  }

  const document = block(0);
  if (position < lines.length) {
    const line = lines[position]!;
    throw new Error(`line ${line.number}: unexpected indentation: ${line.text}`);
  }
  return document;
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

/** The schema keys of an env.ts (`  NAME: z...` at the top level of `z.object({...})`). */
function envKeysRead(file: string): Set<string> {
  return new Set([...read(file).matchAll(/^ {2}([A-Z][A-Z0-9_]*): /gm)].map((match) => match[1]!));
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
const ignored = dockerIgnore(read('.dockerignore'));
const composeText = read('docker-compose.yml');
const compose = mappingAt(parseYaml(composeText), 'docker-compose.yml');
const services = mappingAt(compose.services, 'services');
const service = (name: string) => mappingAt(services[name], `services.${name}`);

/** What a deployer puts in .env: the secrets compose insists on. */
const secrets: Record<string, string> = {
  POSTGRES_PASSWORD: 'packaging-test',
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
    package: '@webhook-inbox/receiver',
    dir: 'apps/receiver',
    service: 'receiver',
    hostVar: 'HOST',
    portVar: 'PORT',
    defaults: parseReceiverConfig({ DATABASE_URL: 'postgres://localhost/x' }),
    parse: (env: Record<string, string>) => parseReceiverConfig(env),
    envFile: 'apps/receiver/src/env.ts',
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
    const version = pinned === '${PNPM_VERSION}' ? arg?.args.split('=')[1] : pinned;
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
      'packages/db/src/cli/migrate.ts',
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
      ['receiver', '@webhook-inbox/receiver'],
      ['worker', '@webhook-inbox/worker'],
      ['migrate', '@webhook-inbox/db'],
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
    // packages/db/src/migrate.ts reads the migrations relative to its own file: where is that in the image?
    const dbDir = path.resolve(
      path.dirname(createRequire(import.meta.url).resolve('@webhook-inbox/db')),
      '..',
    );
    const inImage = path.posix.join(
      `/app/${workspace.get('@webhook-inbox/db')}`,
      path.relative(dbDir, MIGRATIONS_FOLDER),
    );
    expect(inImage).toBe('/app/drizzle');
    expect(copiesOf(dockerfile.stages.get('migrate')!).flatMap((copy) => copy.sources)).toContain(inImage);
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
      'packages/inbox/src/ingest.test.ts',
    ]) {
      expect(ignored(file), file).toBe(true);
    }
  });

  it('sends what the images are built from', () => {
    const needed = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'];
    for (const dir of workspace.values()) needed.push(`${dir}/package.json`);
    for (const dir of ['apps/receiver/src', 'apps/worker/src', 'packages/db/src', 'packages/inbox/src']) {
      for (const file of readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })) {
        if (file.endsWith('.ts') && !file.endsWith('.test.ts')) needed.push(`${dir}/${file}`);
      }
    }
    for (const file of readdirSync(path.join(root, 'drizzle'), { recursive: true, encoding: 'utf8' })) {
      needed.push(`drizzle/${file}`);
    }
    const excluded = needed.filter((file) => ignored(file));
    expect(excluded).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  it('parses (and the minimal parser agrees with PyYAML when it is installed)', (context) => {
    expect(Object.keys(services).sort()).toEqual(['migrate', 'postgres', 'receiver', 'worker']);
    const python = spawnSync(
      'python3',
      ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
      { input: composeText, encoding: 'utf8' },
    );
    if (python.status !== 0) {
      context.skip('python3 with PyYAML is not available: only the built-in parser was used');
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

  it('points every DATABASE_URL at the postgres service', () => {
    const postgres = environment(service('postgres'), secrets);
    for (const name of ['migrate', 'receiver', 'worker']) {
      const url = new URL(environment(service(name), secrets).DATABASE_URL!);
      expect(url.hostname, name).toBe('postgres');
      expect(url.port || '5432').toBe('5432');
      expect(decodeURIComponent(url.username)).toBe(postgres.POSTGRES_USER);
      expect(decodeURIComponent(url.password)).toBe(postgres.POSTGRES_PASSWORD);
      expect(url.pathname).toBe(`/${postgres.POSTGRES_DB}`);
    }
  });

  it('refuses to start without the secrets', () => {
    for (const name of ['POSTGRES_PASSWORD', 'STRIPE_WEBHOOK_SECRET', 'SHOPIFY_WEBHOOK_SECRET']) {
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
      [...read('packages/db/src/cli/migrate.ts').matchAll(/process\.env\.(\w+)/g)].map((match) => match[1]!),
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
    const bossStop = /boss\.stop\(\{[^}]*timeout: ([\d_]+)/.exec(read('apps/receiver/src/receiver.ts'));
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

describe.skipIf(!composeTool)(
  composeTool
    ? `docker-compose.yml through ${composeTool.label}`
    : "docker-compose.yml through a compose implementation (skipped: neither `docker compose` nor `docker-compose` is installed; .ci/run installs Debian's docker-compose when it can)",
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
    const envFile = path.join(mkdtempSync(path.join(tmpdir(), 'compose-env-')), 'empty.env');
    writeFileSync(envFile, '');

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
      let json = result.stdout;
      if (!tool.json) {
        // docker-compose 1.x is Python and needs PyYAML: the same interpreter turns its YAML into JSON.
        const python = spawnSync(
          'python3',
          ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
          { input: result.stdout, encoding: 'utf8' },
        );
        expect(python.stderr).toBe('');
        json = python.stdout;
      }
      resolved = mappingAt(JSON.parse(json) as Yaml, 'config');
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
      for (const name of ['POSTGRES_PASSWORD', 'STRIPE_WEBHOOK_SECRET', 'SHOPIFY_WEBHOOK_SECRET']) {
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
        expect(url.password, name).toBe(secrets.POSTGRES_PASSWORD);
      }
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
