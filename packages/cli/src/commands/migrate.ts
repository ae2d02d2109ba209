import { appRoleOf, migrateDatabase } from '@webhook-inbox/db';
import type { CliContext } from '../context.ts';

/** As the owner's role; the application's (DATABASE_URL's), when another, is created if missing and granted. */
export async function migrate(context: CliContext): Promise<void> {
  const url = context.migrationDatabaseUrl();
  const appUrl = context.databaseUrl();
  const appRole = url === appUrl ? undefined : appRoleOf(url, appUrl);
  await migrateDatabase(url, appRole ? { appRole } : {});
  process.stdout.write(
    `database migrated (drizzle migrations and pg-boss schema${appRole ? `; ${appRole.name} granted` : ''})\n`,
  );
}
