import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Every test lives in a test/ folder (CONTRIBUTING.md): a package's own, or the root one for scenarios across
    // packages. test/packaging.test.ts fails on a test file anywhere else, which this list would not run.
    include: ['apps/*/test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/chaos/**', 'test/consumer/**'],
    globalSetup: ['./test/global-setup.ts'],
    setupFiles: ['./test/after-each-file.ts'],
    // A backstop for a hang, never a speed check: tests wait on conditions with their own deadlines. Tests and
    // hooks that start processes (receivers, workers, the CLI, npx, PgBouncer, the migrations) take minutes on a
    // two-core machine running ten times its cores' worth of other work.
    testTimeout: 300_000,
    hookTimeout: 180_000,
    // Test files share one Postgres but each has its own database, so they run in parallel. Most of a file's
    // time is spent waiting on PostgreSQL, child processes and sockets, so two files at once keep a two-core
    // machine busy where vitest's default (one fewer than the cores) would run them one at a time.
    pool: 'forks',
    maxWorkers: 2,
    // A worker's modules (the inbox, pg, pg-boss, Hono, the catalogue) are loaded once for all the test files it
    // runs, not once per file: about a sixth of the suite's CPU time. Each test file still has its own database and
    // starts its own receivers and workers; a module shared by test files keeps no per-file state at its top
    // level, and test/after-each-file.ts removes the temp files any of them wrote.
    isolate: false,
  },
});
