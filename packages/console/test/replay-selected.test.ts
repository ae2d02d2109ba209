import { useTestDatabase, waitFor } from '@webhook-inbox/testing';
import { queuesOf } from '@webhook-inbox/inbox/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BREAK_GLASS_ACTOR,
  EVENT_TYPE,
  insertFailedEvents,
  login,
  startStack,
  type Client,
  type Stack,
} from './support.ts';

/** "Replay selected" on the events list and the dead letters, over real HTTP and PostgreSQL. */
const db = useTestDatabase();
let stack: Stack;
let client: Client;

/** Posts the list's selection form with these events ticked, as the browser does. */
function postSelection(path: string, events: string[][], extra: Record<string, string> = {}) {
  const body = new URLSearchParams({ _csrf: client.csrf, ...extra });
  for (const key of events) body.append('event', JSON.stringify(key));
  return fetch(`${stack.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: client.cookie, accept: 'text/html' },
    body,
  });
}

async function operationCount(): Promise<number> {
  const { rows } = await stack.pool.query<{ n: number }>('select count(*)::int as n from replay_operations');
  return rows[0]?.n ?? 0;
}

beforeAll(async () => {
  stack = await startStack(db.url, { operations: { pollIntervalMs: 100 } });
  client = await login(stack.url);
  await insertFailedEvents(stack.pool, 'evt_pick', 6);
  await stack.pool.query(
    `update webhook_events set status = 'dead' where event_id in ('evt_pick_00005', 'evt_pick_00006')`,
  );
});
afterAll(async () => {
  await stack?.stop();
});

describe('replay selected', () => {
  it('lists a checkbox per row and replays exactly the chosen events as one audited operation', async () => {
    // Over all groups there is no one group to replay in: the selection is offered once one is chosen.
    const all = await (await client.get('/events?status=failed&group=')).text();
    expect(all).not.toContain('Replay selected');
    const list = await (await client.get('/events?status=failed&group=default')).text();
    expect(list).toContain('Replay selected');
    expect(list.match(/name="event"/g)?.length).toBe(4);

    const response = await postSelection('/events?status=failed', [
      ['stripe', 'evt_pick_00001'],
      ['stripe', 'evt_pick_00003'],
      ['stripe', 'evt_pick_00003'],
    ]);
    expect(response.status).toBe(303);
    const id = Number(/\/operations\/(\d+)$/.exec(response.headers.get('location') ?? '')?.[1]);
    await waitFor(
      async () =>
        (
          await stack.pool.query('select 1 from replay_operations where id = $1 and status = $2', [
            id,
            'completed',
          ])
        ).rowCount === 1,
      { timeout: 30_000 },
    );
    const { rows: replayed } = await stack.pool.query<{ event_id: string }>(
      'select event_id from replay_operation_events where operation_id = $1 order by event_id',
      [id],
    );
    expect(replayed.map((r) => r.event_id)).toEqual(['evt_pick_00001', 'evt_pick_00003']);
    const { rows: jobs } = await stack.pool.query<{ id: string }>(
      `select data->>'eventId' as id from pgboss.job where name = 'webhook-events' order by 1`,
    );
    expect(jobs.map((j) => j.id)).toEqual(['evt_pick_00001', 'evt_pick_00003']);
    const { rows: audits } = await stack.pool.query<{ actor: string; total: number; keys: unknown }>(
      `select actor, (details->>'total')::int as total, details->'filter'->'keys' as keys
         from audit_log where action = 'bulk_replay_started' and target = $1`,
      [`replay operation ${id}`],
    );
    expect(audits).toEqual([
      {
        actor: BREAK_GLASS_ACTOR,
        total: 2,
        keys: [
          ['stripe', 'evt_pick_00001'],
          ['stripe', 'evt_pick_00003'],
        ],
      },
    ]);
    const page = await (await client.get(`/operations/${id}`)).text();
    expect(page).toContain('2 chosen events: stripe evt_pick_00001, stripe evt_pick_00003');
  });

  it('replays chosen dead letters from their page', async () => {
    const response = await postSelection('/dead', [['stripe', 'evt_pick_00006']]);
    expect(response.status).toBe(303);
    const id = Number(/\/operations\/(\d+)$/.exec(response.headers.get('location') ?? '')?.[1]);
    await waitFor(
      async () =>
        (await stack.pool.query('select 1 from replay_operation_events where operation_id = $1', [id]))
          .rowCount === 1,
      { timeout: 30_000 },
    );
  });

  it('answers nothing chosen, too many, an unknown event and a forged value with the list and the reason', async () => {
    const before = await operationCount();
    const refusals: Array<[string, string[][] | string[], string]> = [
      ['/events?status=failed', [], 'no event chosen: tick the box of each event to replay'],
      [
        '/dead',
        Array.from({ length: 101 }, (_, i) => ['stripe', `evt_${i}`]),
        '101 events chosen: at most 100 are replayed at once',
      ],
      [
        '/events',
        [
          ['stripe', 'evt_pick_00002'],
          ['stripe', 'evt_nope'],
        ],
        '1 of the 2 chosen events is not an event (purged, or never received): stripe evt_nope. Nothing was replayed.',
      ],
    ];
    for (const [path, events, message] of refusals) {
      const response = await postSelection(path, events as string[][]);
      expect(response.status).toBe(400);
      const page = await response.text();
      expect(page).toContain(`data-code="invalid_input">${message}`);
      // The list itself, with its rows, not an error page.
      expect(page).toContain('<table class="events">');
    }
    const forged = await fetch(`${stack.url}/dead`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: client.cookie, accept: 'text/html' },
      body: new URLSearchParams({ _csrf: client.csrf, event: 'stripe evt_pick_00002' }),
    });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('a chosen event is not one this list gave');
    expect(await operationCount()).toBe(before);
  });

  it("replays a selection in the list's consumer group: its queue, its rows; an event not of its types refused", async () => {
    await stack.pool.query(
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', $1, 'track', 'database', 0, 'analytics')`,
      [EVENT_TYPE],
    );
    await insertFailedEvents(stack.pool, 'evt_grp', 3);
    await stack.pool.query(
      `update webhook_events set type = 'invoice.paid' where event_id = 'evt_grp_00003'`,
    );
    const list = await (await client.get('/events?group=analytics&q=evt_grp')).text();
    expect(list).toContain('<input type="hidden" name="group" value="analytics" />');

    const outside = await postSelection(
      '/events?group=analytics&q=evt_grp',
      [
        ['stripe', 'evt_grp_00001'],
        ['stripe', 'evt_grp_00003'],
      ],
      { group: 'analytics' },
    );
    expect(outside.status).toBe(400);
    expect(await outside.text()).toContain(
      '1 of the 2 chosen events is not an event of consumer group &quot;analytics&quot; (purged, or never received): stripe evt_grp_00003.',
    );

    const response = await postSelection('/events?group=analytics&q=evt_grp', [['stripe', 'evt_grp_00002']], {
      group: 'analytics',
    });
    expect(response.status).toBe(303);
    await waitFor(
      async () =>
        (
          await stack.pool.query(
            `select 1 from pgboss.job where name = $1 and data->>'eventId' = 'evt_grp_00002'`,
            [queuesOf('analytics').events],
          )
        ).rowCount === 1,
      { timeout: 30_000 },
    );
    const { rows } = await stack.pool.query<{ event_id: string; status: string }>(
      `select event_id, status from webhook_event_groups where consumer_group = 'analytics' and event_id like 'evt_grp_%'`,
    );
    expect(rows).toEqual([{ event_id: 'evt_grp_00002', status: 'received' }]);
    // Nothing of it on the default group's queue.
    const { rowCount } = await stack.pool.query(
      `select 1 from pgboss.job where name = 'webhook-events' and data->>'eventId' like 'evt_grp_%'`,
    );
    expect(rowCount).toBe(0);
  });

  it('refuses a selection without the CSRF token', async () => {
    const response = await postSelection('/events', [['stripe', 'evt_pick_00002']], { _csrf: 'forged' });
    expect(response.status).toBe(403);
  });
});
