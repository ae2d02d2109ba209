import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, useTestDatabase } from '@webhook-inbox/testing';
import { parseConfig, startReceiver, type Receiver } from '@webhook-inbox/receiver';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const STRIPE_SECRET = 'whsec_cli_test_secret';
const SHOPIFY_SECRET = 'shopify_cli_test_secret';
const database = useTestDatabase();
let receiver: Receiver;
let pool: pg.Pool;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a real process, as an operator would. */
async function inbox(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const { DATABASE_URL: _, ...base } = process.env;
  const fullEnv: NodeJS.ProcessEnv = {
    ...base,
    DATABASE_URL: database.url,
    STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
    SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
    RECEIVER_URL: receiver.url,
    // No `.data/` of a developer's `pnpm start` may leak into the test.
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
    ...env,
  };
  for (const [key, value] of Object.entries(fullEnv)) if (value === undefined) delete fullEnv[key];
  return promisify(execFile)(process.execPath, [main, ...args], { env: fullEnv }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

beforeAll(async () => {
  receiver = await startReceiver(
    parseConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
      SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
      LOG_LEVEL: 'silent',
    }),
  );
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});

afterAll(async () => {
  await receiver?.close();
  await pool?.end();
});

describe('inbox send', () => {
  it('signs a Stripe sample and posts it; repeats are duplicates', async () => {
    const run = await inbox(['send', 'stripe', 'checkout.session.completed', '--times', '3', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as {
      eventId: string;
      deliveries: { status: number; body: { status: string } }[];
    };
    expect(result.deliveries.map((d) => [d.status, d.body.status])).toEqual([
      [200, 'accepted'],
      [200, 'duplicate'],
      [200, 'duplicate'],
    ]);
    const { rows } = await pool.query(
      'select type from webhook_events where provider = $1 and event_id = $2',
      ['stripe', result.eventId],
    );
    expect(rows).toEqual([{ type: 'checkout.session.completed' }]);
  });

  it('signs a Shopify order whose id exceeds 2^53 and keeps every digit', async () => {
    const run = await inbox(['send', 'shopify', 'orders/create', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const { eventId } = JSON.parse(run.stdout) as { eventId: string };
    const { rows } = await pool.query<{ id: string }>(
      `select payload->>'id' as id from webhook_events where provider = 'shopify' and event_id = $1`,
      [eventId],
    );
    expect(BigInt(rows[0]?.id ?? 0)).toBeGreaterThan(2n ** 53n);
  });

  it('exits 1 when the receiver refuses (wrong secret), 2 for an unknown sample', async () => {
    const refused = await inbox(['send', 'stripe', 'customer.subscription.created'], {
      STRIPE_WEBHOOK_SECRET: 'whsec_wrong',
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('invalid_signature');
    const unknown = await inbox(['send', 'stripe', 'charge.refunded']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no Stripe sample');
  });
});

describe('inbox events / show', () => {
  it('lists events as JSON with filters and shows one', async () => {
    const sent = await inbox(['send', 'stripe', 'customer.subscription.updated', '--json']);
    const { eventId } = JSON.parse(sent.stdout) as { eventId: string };

    const list = await inbox([
      'events',
      '--provider',
      'stripe',
      '--type',
      'customer.subscription.updated',
      '--since',
      '1h',
      '--json',
    ]);
    expect(list.code, list.stderr).toBe(0);
    const page = JSON.parse(list.stdout) as { events: { eventId: string; status: string }[] };
    expect(page.events.map((e) => e.eventId)).toEqual([eventId]);

    const shown = await inbox(['show', 'stripe', eventId, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const detail = JSON.parse(shown.stdout) as {
      eventId: string;
      type: string;
      payload: { id: string };
      effects: unknown[];
    };
    expect(detail).toMatchObject({
      eventId,
      type: 'customer.subscription.updated',
      payload: { id: eventId },
    });

    const human = await inbox(['events', '--limit', '1']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^receivedAt\s+provider\s+eventId/);
    expect(human.stdout).toContain('more: --cursor ');
  });

  it('pages with a cursor without skipping or repeating', async () => {
    const all = JSON.parse((await inbox(['events', '--limit', '500', '--json'])).stdout) as {
      events: { eventId: string }[];
    };
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const run = await inbox(['events', '--limit', '2', '--json', ...(cursor ? ['--cursor', cursor] : [])]);
      const page = JSON.parse(run.stdout) as { events: { eventId: string }[]; nextCursor: string | null };
      seen.push(...page.events.map((e) => e.eventId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(all.events.map((e) => e.eventId));
  });

  it('exits 3 for an unknown event and 2 for bad arguments', async () => {
    expect((await inbox(['show', 'stripe', 'evt_missing'])).code).toBe(3);
    expect((await inbox(['events', '--status', 'bogus'])).code).toBe(2);
    expect((await inbox(['events', '--since', 'yesterday'])).code).toBe(2);
    expect((await inbox(['nonsense'])).code).toBe(2);
    const help = await inbox(['events', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--status');
  });

  it('explains a missing database', async () => {
    const run = await inbox(['events'], { DATABASE_URL: undefined });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DATABASE_URL is not set');
  });
});

describe('inbox migrate', () => {
  it('migrates an empty database', async () => {
    const empty = await createTestDatabase({ migrated: false });
    try {
      const run = await inbox(['migrate'], { DATABASE_URL: empty.url });
      expect(run.code, run.stderr).toBe(0);
      const client = new pg.Client({ connectionString: empty.url });
      await client.connect();
      const { rows } = await client.query(`select to_regclass('public.webhook_events') as t`);
      await client.end();
      expect(rows).toEqual([{ t: 'webhook_events' }]);
    } finally {
      await empty.drop();
    }
  });
});
