import { recordEffectRoutes } from '@webhook-inbox/inbox';
import { createExampleInbox } from '@webhook-inbox/worker';
import { parseConfig, startReceiver, type Receiver } from '@webhook-inbox/receiver';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

export { runCli, startCli, type Run, type RunningCli } from '@webhook-inbox/scenarios/cli';

/** What the example worker records when it starts: the CLI's replays read it. */
export async function recordExampleRoutes(pool: pg.Pool): Promise<void> {
  const example = createExampleInbox({
    mailer: { send: () => Promise.reject(new Error('no mail in this test')), close: () => {} },
    messageIdDomain: 'localhost',
  });
  await recordEffectRoutes(pool, example.effectRoutes());
}

/**
 * A receiver for the CLI to talk to (`env` added to its configuration) and a pool on the test database with the
 * example worker's routes recorded, for the file's tests; both closed after them.
 */
export function useCliReceiver(
  database: { url: string },
  env: Record<string, string>,
): { receiver: () => Receiver; pool: () => pg.Pool } {
  let receiver: Receiver | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    receiver = await startReceiver(
      parseConfig({
        DATABASE_URL: database.url,
        PORT: '0',
        MANAGEMENT_PORT: '0',
        LOG_LEVEL: 'silent',
        ...env,
      }),
    );
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    await recordExampleRoutes(pool);
  });
  afterAll(async () => {
    await receiver?.close();
    await pool?.end();
  });
  return { receiver: () => receiver!, pool: () => pool! };
}
