import { loadDotEnv } from '../dotenv.ts';
import { migrateDatabase, type MigrateOptions } from '../migrate.ts';

/**
 * A migrate command's body: DATABASE_URL (or .env), the migrations, a one-line result. Resolves to the exit
 * code: 0 migrated, 1 the migration failed, 2 no DATABASE_URL.
 */
export async function runMigrateCommand(options: MigrateOptions = {}): Promise<number> {
  loadDotEnv();
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error(
      'DATABASE_URL is not set: migrate needs the database to migrate (postgres://user:pass@host/db).',
    );
    return 2;
  }
  try {
    await migrateDatabase(url, options);
    console.log('database migrated (drizzle migrations and pg-boss schema)');
    return 0;
  } catch (error) {
    console.error('migration failed:', error instanceof Error ? error.message : error);
    return 1;
  }
}
