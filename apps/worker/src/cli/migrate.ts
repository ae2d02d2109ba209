/** `pnpm db:migrate`: the inbox's tables, the example product's and pg-boss's schema, as MIGRATION_DATABASE_URL (or DATABASE_URL). */
import { runMigrateCommand } from '@webhook-inbox/db';
import { EXAMPLE_MIGRATIONS } from '../migrations.ts';

process.exitCode = await runMigrateCommand({ also: [EXAMPLE_MIGRATIONS] });
