import { loadDotEnv } from '../dotenv.ts';
import { migrateDatabase } from '../migrate.ts';

loadDotEnv();
const url = process.env.DATABASE_URL;
if (!url) {
  console.error(
    'DATABASE_URL is not set: db:migrate needs the database to migrate (postgres://user:pass@host/db).',
  );
  process.exit(2);
}
try {
  await migrateDatabase(url);
  console.log('database migrated (drizzle migrations and pg-boss schema)');
} catch (error) {
  console.error('migration failed:', error instanceof Error ? error.message : error);
  process.exit(1);
}
