import { afterAll, beforeAll } from 'vitest';

/** Something a test file started, readable inside its tests. */
export interface Started<T> {
  /** What `start` gave; throws when read before `beforeAll` started it (at a test file's top level, say). */
  readonly value: T;
}

/**
 * Starts `start()` before the test file's tests and `stop`s it after them (a receiver, a pool and a pg-boss). Call
 * at the top level of a test file, or of a helper a test file calls there; read `value` inside tests only.
 */
export function useStarted<T>(
  what: string,
  start: () => Promise<T>,
  stop: (value: T) => Promise<unknown>,
): Started<T> {
  let started: { value: T } | undefined;
  beforeAll(async () => {
    started = { value: await start() };
  });
  afterAll(async () => {
    if (started) await stop(started.value);
  });
  return {
    get value(): T {
      if (started === undefined) throw new Error(`${what} is read before beforeAll started it`);
      return started.value;
    },
  };
}
