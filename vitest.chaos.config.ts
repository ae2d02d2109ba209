import { defineConfig } from 'vitest/config';

// The reliability suite (`pnpm test:chaos`): real receiver and worker processes, real PostgreSQL, real SMTP,
// with processes killed, the database restarted and connections hung. Each file needs the whole machine (two
// cores), so files run one after another; timeouts are generous because recovery waits on job expiry.
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['./packages/testing/src/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    // A flaky chaos scenario is a bug to find, not to retry away.
    retry: 0,
  },
});
