import { defineConfig } from 'vitest/config';

// `pnpm test:consumer`: the published packages installed from their tarballs into a fresh npm project, used as
// the inbox README says (test/consumer/consumer.test.ts). Needs the npm registry for the peer dependencies.
export default defineConfig({
  test: {
    include: ['test/consumer/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['./test/global-setup.ts'],
    // Deadlines only a hung step reaches: the set-up builds, packs and npm-installs every package, which takes
    // 2-4 minutes on a quiet machine and over 10 on a busy one (load average 20).
    testTimeout: 900_000,
    hookTimeout: 1_800_000,
    retry: 0,
  },
});
