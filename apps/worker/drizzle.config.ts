import { defineConfig } from 'drizzle-kit';

// The example product's tables only (migrations in the repository's drizzle/example/); the inbox's own are packages/db's.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: '../../drizzle/example',
});
