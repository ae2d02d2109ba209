/** Exit codes: scripts can tell a wrong invocation from a missing record from a failed operation. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
} as const;

/** The command was called wrongly or the environment lacks something it needs. Exit code 2. */
export class UsageError extends Error {
  readonly exitCode = EXIT.usage;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The thing asked for does not exist. Exit code 3. */
export class NotFoundError extends Error {
  readonly exitCode = EXIT.notFound;
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}
