import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The `webhook-inbox` command's entry (`@webhook-inbox/cli`'s `src/main.ts`), found by path at run time rather than
 * imported: the CLI's own tests use this package, so a dependency on the CLI would be a cycle.
 */
export const CLI_MAIN = fileURLToPath(new URL('../../../cli/src/main.ts', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI as a real process, as an operator would, with the test's environment minus its DATABASE_URL, plus
 * `env` (a value `undefined` removes the variable).
 */
export function runCli(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return promisify(execFile)(process.execPath, [CLI_MAIN, ...args], { env: cliEnv(env) }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

/** The test's environment minus its DATABASE_URL, plus `env` (a value `undefined` removes the variable). */
function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, ...base } = process.env;
  const fullEnv: NodeJS.ProcessEnv = { ...base, ...env };
  for (const [key, value] of Object.entries(fullEnv)) if (value === undefined) delete fullEnv[key];
  return fullEnv;
}

/** A CLI command that runs until stopped (`listen`), as its own process; its stdout and stderr kept apart. */
export interface RunningCli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, and its exit code once it exited. */
  stop: () => Promise<number | null>;
}

/** Starts the CLI as `runCli` does, without waiting for it to end; the caller stops it. */
export function startCli(args: string[], env: Record<string, string | undefined>): RunningCli {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The CLI as a token's bearer runs it against the admin API at `url` (`--url`, `--token`): no database, nor a
 * token, URL or data folder of the environment's.
 */
export function runRemoteCli(args: string[], remote: { url: string; token: string }): Promise<Run> {
  return runCli([...args, '--url', remote.url, '--token', remote.token], {
    DATABASE_URL: '',
    WEBHOOK_INBOX_TOKEN: undefined,
    WEBHOOK_INBOX_URL: undefined,
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
  });
}
