import { loadDotEnv } from '@webhook-inbox/db/dotenv';
import { ConfigError, parseConfig } from './env.ts';
import { createLogger } from './logger.ts';
import { startReceiver } from './receiver.ts';
import { installShutdown } from './shutdown.ts';

loadDotEnv();
let config;
try {
  config = parseConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`receiver: ${error.message}\n`);
  process.exit(2);
}
const logger = createLogger(config.logLevel);
try {
  const receiver = await startReceiver(config, { logger });
  installShutdown(() => receiver.close(), logger);
} catch (error) {
  logger.fatal(
    { err: error instanceof Error ? { message: error.message, cause: String(error.cause) } : error },
    'receiver failed to start',
  );
  logger.flush();
  process.exit(1);
}
