import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'apps/*/src/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', 'test/chaos/**', 'test/consumer/**'],
    globalSetup: ['./test/global-setup.ts'],
    // A backstop: tests wait on conditions with their own deadlines. Tests that start processes (the CLI, the
    // migrations, docker-compose) take far longer than usual on a two-core machine shared with other work.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Test files share one Postgres but each has its own database, so they run in parallel.
    pool: 'forks',
  },
});
