import { migrateDatabase } from '@webhook-inbox/db';
import type { CliContext } from '../context.ts';

export async function migrate(context: CliContext): Promise<void> {
  await migrateDatabase(context.databaseUrl());
  process.stdout.write('database migrated (drizzle migrations and pg-boss schema)\n');
}
