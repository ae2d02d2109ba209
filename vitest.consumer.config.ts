import { defineConfig } from 'vitest/config';

// `pnpm test:consumer`: the published packages installed from their tarballs into a fresh npm project, used as
// the inbox README says (test/consumer/consumer.test.ts). Needs the npm registry for the peer dependencies.
export default defineConfig({
  test: {
    include: ['test/consumer/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    retry: 0,
  },
});
