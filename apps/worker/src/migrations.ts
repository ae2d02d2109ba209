import { fileURLToPath } from 'node:url';
import {
  LEGACY_SHARED_MIGRATIONS,
  migrateDatabase,
  type AppRole,
  type MigrationSet,
} from '@webhook-inbox/db';

/** The example product's tables (src/schema.ts), applied after the inbox's own; in the repository's `drizzle/example/`. */
export const EXAMPLE_MIGRATIONS: MigrationSet = {
  folder: fileURLToPath(new URL('../../../drizzle/example', import.meta.url)),
  table: '__webhook_inbox_example_migrations',
  // webhook-inbox 0.1 created these tables in the migrations it shared with the inbox's.
  legacy: [LEGACY_SHARED_MIGRATIONS],
};

/**
 * The inbox's migrations, the example product's, and the pg-boss schema: what this deployment runs on; as
 * `connectionString`'s role, the owner, granting `appRole` (the role the apps connect as) when given.
 */
export function migrateExampleDatabase(connectionString: string, appRole?: AppRole): Promise<void> {
  return migrateDatabase(connectionString, { also: [EXAMPLE_MIGRATIONS], ...(appRole ? { appRole } : {}) });
}
