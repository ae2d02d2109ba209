import { spawnSync } from 'node:child_process';

/**
 * Whether a suite that needs an outside tool (PgBouncer, Chromium, promtool, a compose implementation) runs:
 * `describe.runIf(requireTool(...))`. Present: true. Missing under `CI=true`: throws, so the file fails with a
 * message naming the tool and how to install it (CI installs every such tool, and a suite that skips there would
 * pass green without having run). Missing elsewhere: warns, and returns false so the suite skips.
 *
 * @example
 * describe.runIf(requireTool('pgbouncer', pgbouncerAvailable(), 'apt-get install pgbouncer'))('...', () => {});
 */
export function requireTool(tool: string, found: boolean, install: string): boolean {
  if (found) return true;
  const missing = `${tool} is not installed (${install})`;
  if (underCi()) {
    throw new Error(
      `CI=true and ${missing}: CI runs every suite, so install it (.ci/run does where apt can) or run without CI=true to skip.`,
    );
  }
  console.warn(`SKIPPED: the tests that need ${tool}: ${missing}.`);
  return false;
}

/** True when `command --version` runs: the tool is on the PATH. */
export function onPath(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

function underCi(): boolean {
  return process.env.CI === 'true' || process.env.CI === '1';
}
