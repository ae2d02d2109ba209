export { createDb, createPool, transactionClient, type Database, type PoolOptions } from './client.ts';
export { clientClassFor, UnnamedStatementClient, type DatabasePooler } from './pooler.ts';
export { loadDotEnv } from './dotenv.ts';
export { appRoleOf, AppRoleError, grantAppRole, type AppRole } from './app-role.ts';
export {
  INBOX_MIGRATIONS,
  LEGACY_SHARED_MIGRATIONS,
  MIGRATIONS_FOLDER,
  migrateDatabase,
  type MigrateOptions,
  type MigrationSet,
} from './migrate.ts';
export { runMigrateCommand } from './cli/migrate-command.ts';
export * from './schema.ts';
