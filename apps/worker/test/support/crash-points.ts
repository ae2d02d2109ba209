import { fileURLToPath } from 'node:url';

/** `node <this> <point>:<effect>`: the real worker, SIGKILLing itself at that point of that effect. */
export const CRASHING_WORKER_ENTRY = fileURLToPath(new URL('./crashing-worker.ts', import.meta.url));

/** Where `crashing-worker.ts` can kill the process, in the order an effect passes them. */
export const CRASH_POINTS = [
  /** The effect was called: nothing of it ran. */
  'before-effect',
  /** The effect returned: a database effect's transaction is not committed, an external effect is not marked. */
  'after-effect-before-commit',
  /** The effect's ledger row committed (a database effect with its transaction, an external one marked done). */
  'after-commit',
  /** Every effect of the event committed and the event is settled `processed`; pg-boss has not completed the job. */
  'after-settle-before-complete',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Printed to stderr right before the SIGKILL. */
export const CRASH_MARKER = 'crashing-worker: SIGKILL now';
