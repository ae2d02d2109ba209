export { createDb, createPool, type Database, type PoolOptions } from './client.ts';
export { loadDotEnv } from './dotenv.ts';
export { MIGRATIONS_FOLDER, migrateDatabase, type MigrateOptions } from './migrate.ts';
export * from './schema.ts';
