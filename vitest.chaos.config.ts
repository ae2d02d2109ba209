import { defineConfig } from 'vitest/config';

// The reliability suite (`pnpm test:chaos`): real receiver and worker processes, real PostgreSQL, real SMTP,
// with processes killed, the database restarted and connections hung. Each file needs the whole machine (two
// cores), so files run one after another. Every wait in a scenario has its own deadline, which names what was
// awaited: a stall fails there, with its name. The test timeout is only a backstop, above the sum of a scenario's
// waits (worker-sigkill's add up to 8 x 120 s + 300 s), so a slow but moving scenario on a two-core machine shared
// with other work is never cut off by it.
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
    // A flaky chaos scenario is a bug to find, not to retry away.
    retry: 0,
  },
});
