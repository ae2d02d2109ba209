import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `@webhook-inbox/providers` as a service that is not an inbox installs it: its tarball alone, with npm, in a fresh
 * project. Its tree holds no database library, and it verifies deliveries signed by the providers' own libraries
 * (`@octokit/webhooks`' `sign`, `stripe`'s `webhooks.generateTestHeaderString`) under plain `node`.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

let work: string;
let project: string;
/** Every path in the package's tarball. */
let packed: string[];

async function inProject(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(command, args, { cwd: project, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** Every package directory under the project's `node_modules`, nested copies too, by name. */
async function installedPackages(): Promise<string[]> {
  const modules = path.join(project, 'node_modules');
  const names = new Set<string>();
  for (const entry of await readdir(modules, { recursive: true, withFileTypes: true })) {
    if (entry.name !== 'package.json') continue;
    const relative = path.relative(modules, entry.parentPath).split(path.sep);
    const inPackage = relative.lastIndexOf('node_modules') + 1;
    const name = relative.slice(inPackage).join('/');
    if (relative.length - inPackage === (name.startsWith('@') ? 2 : 1)) names.add(name);
  }
  return [...names].sort();
}

// Plain JavaScript a team's service would write; the signatures are the senders' libraries', not this package's.
const VERIFY_SCRIPT = `
import { Webhooks } from '@octokit/webhooks';
import Stripe from 'stripe';
import { githubProvider, stripeProvider, verify } from '@webhook-inbox/providers';

const secret = 'consumer-github-secret';
const whsec = 'whsec_consumer_providers_secret';
const results = {};

const githubBody = JSON.stringify({ action: 'opened', number: 7, pull_request: { number: 7 } });
const githubHeaders = {
  'X-GitHub-Event': 'pull_request',
  'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  'X-Hub-Signature-256': await new Webhooks({ secret }).sign(githubBody),
};
const github = githubProvider({ secrets: [secret] });
const request = { method: 'POST', url: '/webhooks/github', headers: githubHeaders, rawBody: githubBody };
results.github = await verify(github, request);
results.githubTampered = await verify(github, { ...request, rawBody: githubBody.replace('7', '8') });

const stripeBody = JSON.stringify({ id: 'evt_consumer_1', object: 'event', type: 'charge.refunded', data: { object: {} } });
const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: stripeBody, secret: whsec });
const stripe = stripeProvider({ secrets: [whsec], toleranceSeconds: 300 });
const headers = new Headers({ 'stripe-signature': header });
results.stripe = await verify(stripe, { url: 'https://example.com/webhooks/stripe', headers, rawBody: new TextEncoder().encode(stripeBody) });
results.stripeTampered = await verify(stripe, { headers, rawBody: stripeBody.replace('refunded', 'captured') });

const summary = (result) =>
  result.ok
    ? { ok: true, events: result.events.map(({ provider, eventId, type }) => ({ provider, eventId, type })) }
    : { ok: false, code: result.code };
console.log(JSON.stringify(Object.fromEntries(Object.entries(results).map(([name, result]) => [name, summary(result)]))));
`;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'webhook-inbox-providers-'));
  project = path.join(work, 'verifier');
  const tarballs = path.join(work, 'tarballs');
  await mkdir(project);
  await mkdir(tarballs);
  // `prepack` builds the package's dist/ first.
  await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: path.join(root, 'packages/providers') });
  const [tarball] = await readdir(tarballs);
  expect(tarball).toMatch(/^webhook-inbox-providers-.*\.tgz$/);
  packed = (await run('tar', ['-tzf', path.join(tarballs, tarball!)])).stdout.split('\n').filter(Boolean);
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'verifier', private: true, type: 'module' }),
  );
  await inProject('npm', ['install', '--no-audit', '--no-fund', path.join(tarballs, tarball!)]);
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('@webhook-inbox/providers installed alone', () => {
  it('brings no database library: no pg, no pg-boss, no drizzle-orm, no other @webhook-inbox package', async () => {
    const installed = await installedPackages();
    expect(installed).toContain('@webhook-inbox/providers');
    expect(installed.filter((name) => /^(pg|pg-boss|drizzle-orm|pino|stripe)$/.test(name))).toEqual([]);
    expect(installed.filter((name) => name.startsWith('@webhook-inbox/'))).toEqual([
      '@webhook-inbox/providers',
    ]);
    const { megabytes } = JSON.parse((await inProject('node', ['-e', DU_SCRIPT])).stdout) as {
      megabytes: number;
    };
    console.log(`@webhook-inbox/providers alone: node_modules ${megabytes} MB, ${installed.length} packages`);
  });

  it('ships no sample delivery: they are @webhook-inbox/samples’, which it does not bring', async () => {
    expect(packed).toContain('package/dist/index.js');
    expect(packed.filter((file) => /sample/i.test(file))).toEqual([]);
    const manifest = JSON.parse(
      await readFile(path.join(project, 'node_modules/@webhook-inbox/providers/package.json'), 'utf8'),
    ) as { exports: Record<string, unknown>; dependencies?: Record<string, string> };
    expect(Object.keys(manifest.exports).filter((entry) => /sample/.test(entry))).toEqual([]);
    expect(existsSync(path.join(project, 'node_modules/@webhook-inbox/samples'))).toBe(false);
  });

  it('verifies a GitHub and a Stripe delivery signed by their own libraries, and refuses tampered ones', async () => {
    await inProject('npm', ['install', '--no-audit', '--no-fund', '@octokit/webhooks', 'stripe']);
    await writeFile(path.join(project, 'verify.mjs'), VERIFY_SCRIPT);
    const { stdout } = await inProject(process.execPath, ['verify.mjs']);
    expect(JSON.parse(stdout)).toEqual({
      github: {
        ok: true,
        events: [
          {
            provider: 'github',
            eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
            type: 'pull_request.opened',
          },
        ],
      },
      githubTampered: { ok: false, code: 'invalid_signature' },
      stripe: {
        ok: true,
        events: [{ provider: 'stripe', eventId: 'evt_consumer_1', type: 'charge.refunded' }],
      },
      stripeTampered: { ok: false, code: 'invalid_signature' },
    });
  });
});

/** Bytes of the project's `node_modules` (npm copies every file), in MB. */
const DU_SCRIPT = `
const { readdirSync, statSync } = require('node:fs');
const path = require('node:path');
let bytes = 0;
for (const entry of readdirSync('node_modules', { recursive: true, withFileTypes: true })) {
  if (entry.isFile()) bytes += statSync(path.join(entry.parentPath, entry.name)).size;
}
console.log(JSON.stringify({ megabytes: Math.round(bytes / 1e5) / 10 }));
`;
