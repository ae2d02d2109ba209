/**
 * `pnpm build`: the published packages' JavaScript and declarations (`dist/`), from scratch, so no file of a
 * removed source survives in a tarball. Inside the workspace nothing needs it: every package's `exports` point at
 * its TypeScript sources, which Node runs by type stripping; `pnpm pack` swaps in `publishConfig.exports`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** In dependency order; `tsc -b` follows the references anyway. */
export const PUBLISHED_PACKAGES = [
  'packages/env',
  'packages/db',
  'packages/providers',
  'packages/samples',
  'packages/inbox',
  'packages/operator',
  'packages/tracing',
  'packages/console',
  'packages/receiver',
  'packages/cli',
] as const;

const root = fileURLToPath(new URL('..', import.meta.url));

export function buildPackages(): void {
  for (const dir of PUBLISHED_PACKAGES) {
    rmSync(path.join(root, dir, 'dist'), { recursive: true, force: true });
    rmSync(path.join(root, dir, 'node_modules/.cache/tsconfig.build.tsbuildinfo'), { force: true });
  }
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const configs = PUBLISHED_PACKAGES.map((dir) => path.join(root, dir, 'tsconfig.build.json'));
  const result = spawnSync(process.execPath, [tsc, '-b', ...configs], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`tsc -b failed (exit ${result.status ?? result.signal})`);
  // Files a package reads at run time next to its modules (the console's assets): its own `copy-assets` script.
  for (const dir of PUBLISHED_PACKAGES) {
    const { scripts } = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    if (!scripts?.['copy-assets']) continue;
    const copied = spawnSync(scripts['copy-assets'], {
      cwd: path.join(root, dir),
      shell: true,
      stdio: 'inherit',
    });
    if (copied.status !== 0)
      throw new Error(`${dir}: copy-assets failed (exit ${copied.status ?? copied.signal})`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) buildPackages();
