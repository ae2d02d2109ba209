import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Reads `.env` from the directory pnpm was invoked in (INIT_CWD; the repo root for the README commands) or
 * the current directory. Variables already in the environment win, as with dotenv.
 */
export function loadDotEnv(): void {
  for (const dir of new Set([process.env.INIT_CWD, process.cwd()])) {
    if (!dir) continue;
    const file = path.join(dir, '.env');
    if (existsSync(file)) {
      process.loadEnvFile(file);
      return;
    }
  }
}
