import { fileURLToPath } from 'node:url';

/** The worker's entry point, for `spawnWorker` of `@webhook-inbox/scenarios/worker` (which names no app itself). */
export const WORKER_ENTRY = fileURLToPath(new URL('../../src/server.ts', import.meta.url));
