/** `node src/cli/migrate.ts`: the inbox's tables and pg-boss's schema on DATABASE_URL. */
import { runMigrateCommand } from './migrate-command.ts';

process.exitCode = await runMigrateCommand();
