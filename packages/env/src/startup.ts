import { ConfigError } from './index.ts';

/**
 * A process's configuration at start-up: `parse()`'s result, or, when the environment is wrong, every wrong
 * variable on stderr (`<service>: invalid configuration: ...`) and exit code 2, before anything has started.
 * Any other error is a bug and is thrown.
 */
export function configOrExit<T>(service: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(2);
  }
}
