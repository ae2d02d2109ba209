import { appRoleOf } from '../app-role.ts';
import { loadDotEnv } from '../dotenv.ts';
import { migrateDatabase, type MigrateOptions } from '../migrate.ts';

/**
 * A migrate command's body: the migrations, a one-line result. The migrations run as MIGRATION_DATABASE_URL's role,
 * the owner of the tables, which then grants DATABASE_URL's role (the application's; created when missing) what the
 * application needs (`grantAppRole`). Without MIGRATION_DATABASE_URL they run as DATABASE_URL's role, which then
 * owns the tables (one role for everything). Both from the environment or .env. Resolves to the exit code: 0
 * migrated, 1 the migration failed, 2 no database URL.
 */
export async function runMigrateCommand(options: MigrateOptions = {}): Promise<number> {
  loadDotEnv();
  const appUrl = process.env.DATABASE_URL;
  const url = process.env.MIGRATION_DATABASE_URL || appUrl;
  if (!url) {
    console.error(
      'DATABASE_URL is not set: migrate needs the database to migrate (postgres://user:pass@host/db), and ' +
        'MIGRATION_DATABASE_URL when the tables belong to another role than the application connects as.',
    );
    return 2;
  }
  try {
    const appRole = appUrl && url !== appUrl ? appRoleOf(url, appUrl) : undefined;
    await migrateDatabase(url, { ...options, ...(appRole ? { appRole } : {}) });
    console.log(
      `database migrated (drizzle migrations and pg-boss schema${appRole ? `; ${appRole.name} granted` : ''})`,
    );
    return 0;
  } catch (error) {
    console.error('migration failed:', error instanceof Error ? error.message : error);
    return 1;
  }
}
