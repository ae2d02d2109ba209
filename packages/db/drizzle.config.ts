import { defineConfig } from 'drizzle-kit';

// The inbox's tables; their migrations live in the repository's top-level drizzle/ (packed into dist/ by the build).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: '../../drizzle/inbox',
});
