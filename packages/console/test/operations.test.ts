import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuesOf } from '@webhook-inbox/inbox/queue';
import { startOperationsRunner } from '../src/index.ts';
import {
  BREAK_GLASS_ACTOR,
  EVENT_TYPE,
  insertFailedEvents,
  login,
  startStack,
  type Client,
  type Stack,
} from './support.ts';

const db = useTestDatabase();
let stack: Stack;
let client: Client;

interface Operation {
  status: string;
  total: number;
  done: number;
  enqueued: number;
  cursor: [string, string, string] | null;
  locked_by: string | null;
}

async function operation(id: number): Promise<Operation> {
  const { rows } = await stack.pool.query<Operation>(
    'select status, total, done, enqueued, cursor, locked_by from replay_operations where id = $1',
    [id],
  );
  if (!rows[0]) throw new Error(`no operation ${id}`);
  return rows[0];
}

async function jobsFor(prefix: string): Promise<number> {
  const { rows } = await stack.pool.query<{ n: number }>(
    `select count(*)::int as n from pgboss.job where name = 'webhook-events' and data->>'eventId' like $1 || '%'`,
    [prefix],
  );
  return rows[0]?.n ?? 0;
}

/** Runs the dry run for a filter and starts the operation from its form, as a browser would. */
async function startBulk(query: string): Promise<{ id: number; dryRun: string }> {
  const dryRun = await (await client.get(`/bulk?${query}`)).text();
  const fields = Object.fromEntries(
    [...dryRun.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)" \/>/g)].map((m) => [m[1], m[2]]),
  ) as Record<string, string>;
  const response = await client.post('/bulk', { ...fields, _csrf: client.csrf });
  expect(response.status).toBe(303);
  const id = Number(/\/operations\/(\d+)$/.exec(response.headers.get('location') ?? '')?.[1]);
  return { id, dryRun };
}

beforeAll(async () => {
  // Chunks of 100, so that 450 events take five chunks.
  stack = await startStack(db.url, { operations: { chunkSize: 100, pollIntervalMs: 100 } });
  client = await login(stack.url);
});
afterAll(async () => {
  await stack?.stop();
});

describe('bulk replay', () => {
  it('counts the matching events in a dry run, then replays every one of them: no cap', async () => {
    await insertFailedEvents(stack.pool, 'evt_bulk', 450);
    await insertFailedEvents(stack.pool, 'evt_other', 5);
    const { id, dryRun } = await startBulk('status=failed&path=data.object.customer&value=cus_bulk');
    expect(dryRun).toContain('<strong>455</strong> events received up to');
    await waitFor(async () => (await operation(id)).status === 'completed', { timeout: 30_000 });
    expect(await operation(id)).toMatchObject({ total: 455, done: 455, enqueued: 455, locked_by: null });
    expect(await jobsFor('evt_bulk')).toBe(450);
    expect(await jobsFor('evt_other')).toBe(5);
    const { rows } = await stack.pool.query<{ actor: string; target: string; total: number }>(
      `select actor, target, (details->>'total')::int as total from audit_log where action = 'bulk_replay_started'`,
    );
    expect(rows).toEqual([{ actor: BREAK_GLASS_ACTOR, target: `replay operation ${id}`, total: 455 }]);
    const page = await (await client.get(`/operations/${id}/progress`)).text();
    expect(page).toMatch(/<strong class="done">455<\/strong> of\s*<span class="total">455<\/span>/);
    // No worker here: the 455 replayed events wait on the queue, so the block keeps polling for their outcome.
    expect(page).toMatch(/>455 still failing or waiting<\/a/);
    expect(page).toContain('hx-trigger');
  });

  it('cancels an operation before it runs (nothing replayed); a finished one answers 409 conflict', async () => {
    await insertFailedEvents(stack.pool, 'evt_cancel', 3000, 'cus_cancel');
    await stack.console.stop();
    const { id } = await startBulk('status=failed&path=data.object.customer&value=cus_cancel');
    // No runner yet: the operation waits, and cancelling it replays nothing.
    expect((await operation(id)).status).toBe('pending');
    const cancel = await client.post(`/operations/${id}/cancel`, { _csrf: client.csrf });
    expect(cancel.status).toBe(303);
    stack.console.start();
    const again = await client.post(`/operations/${id}/cancel`, { _csrf: client.csrf });
    expect(again.status).toBe(409);
    expect(await operation(id)).toMatchObject({ status: 'cancelled', done: 0 });
    expect(await jobsFor('evt_cancel')).toBe(0);
  });

  it('resumes after a crash from the cursor the dead runner recorded, once its lease expires', async () => {
    const { rows: cut } = await stack.pool.query<{ at: string }>(
      `select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
         from webhook_events where event_id = 'evt_cancel_01000'`,
    );
    // A runner that replayed the first 1000 events and died holding the operation, its lease 1 s from expiry.
    const { rows } = await stack.pool.query<{ id: number }>(
      `insert into replay_operations (filter, received_up_to, status, total, done, enqueued, cursor, created_by,
                                      locked_by, locked_until)
       values ('{"status":"failed","path":"data.object.customer","value":"cus_cancel"}', now(), 'running', 3000, 1000, 1000,
               jsonb_build_array($1::text, 'stripe', 'evt_cancel_01000'), 'Ada', 'console-dead', now() + interval '1 second')
       returning id`,
      [cut[0]?.at],
    );
    const id = rows[0]!.id;
    await waitFor(async () => (await operation(id)).status === 'completed', { timeout: 60_000 });
    expect(await operation(id)).toMatchObject({ done: 3000, enqueued: 3000 });
    const { rows: jobs } = await stack.pool.query<{ first: string; n: number }>(
      `select min(data->>'eventId') as first, count(*)::int as n
         from pgboss.job where name = 'webhook-events' and data->>'eventId' like 'evt_cancel%'`,
    );
    expect(jobs[0]).toEqual({ first: 'evt_cancel_01001', n: 2000 });
  }, 90_000);

  it('lets two runners share the work without ever holding one operation together', async () => {
    await insertFailedEvents(stack.pool, 'evt_two', 600, 'cus_two');
    const second = startOperationsRunner({
      pool: stack.pool,
      boss: stack.boss,
      effectsFor: () => Promise.resolve(undefined),
      logger: pino({ level: 'silent' }),
      chunkSize: 50,
      pollIntervalMs: 50,
    });
    try {
      const a = await startBulk('status=failed&path=data.object.customer&value=cus_two&from=2h');
      await waitFor(async () => (await operation(a.id)).status === 'completed', { timeout: 60_000 });
      expect(await operation(a.id)).toMatchObject({ total: 600, done: 600 });
      // Every event replayed exactly once: a chunk replayed by two runners would have sent two jobs.
      expect(await jobsFor('evt_two')).toBe(600);
    } finally {
      await second.stop();
    }
  }, 90_000);

  it("replays for a consumer group: that group's types only, on its queue, backfilling the rows it never had", async () => {
    await stack.pool.query(
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', $1, 'track', 'database', 0, 'analytics')`,
      [EVENT_TYPE],
    );
    await insertFailedEvents(stack.pool, 'evt_group', 30, 'cus_group');
    // Not a type the group has effects for: outside its set.
    await stack.pool.query(
      `update webhook_events set type = 'invoice.paid' where event_id between 'evt_group_00021' and 'evt_group_00030'`,
    );
    const defaultJobs = await jobsFor('evt_group');
    // No status: every event of the group's types in the range, including those it never had.
    const { id, dryRun } = await startBulk('group=analytics&path=data.object.customer&value=cus_group');
    expect(dryRun).toContain('<strong>20</strong> events received up to');
    expect(dryRun).toContain('--group analytics');
    await waitFor(async () => (await operation(id)).status === 'completed', { timeout: 30_000 });
    expect(await operation(id)).toMatchObject({ total: 20, done: 20, enqueued: 20 });
    const { rows } = await stack.pool.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from webhook_event_groups
        where consumer_group = 'analytics' and event_id like 'evt_group_%' group by status`,
    );
    expect(rows).toEqual([{ status: 'received', n: 20 }]);
    const { rows: jobs } = await stack.pool.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where name = $1 and data->>'eventId' like 'evt_group_%'`,
      [queuesOf('analytics').events],
    );
    expect(jobs[0]?.n).toBe(20);
    // The default group's queue got nothing from it.
    expect(await jobsFor('evt_group')).toBe(defaultJobs);
  });

  it('refuses a bulk replay for a group whose worker never recorded its effects', async () => {
    const response = await client.post('/bulk', {
      group: 'nobody',
      status: 'failed',
      upTo: new Date().toISOString(),
      _csrf: client.csrf,
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('no worker of consumer group');
  });
});
