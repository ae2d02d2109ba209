import { post, receiverEnv, stripeEventOf } from '@webhook-inbox/scenarios/receiver';
import { ensureQueues } from '@webhook-inbox/inbox';
import { startTestBoss, useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { adminCaller } from './admin-client.ts';
import { memoryLogger, sql } from './helpers.ts';

// The admin API of `webhook-inbox listen` over real HTTP: a listener streams the events of its token's groups,
// oldest first, never one it acknowledged, and still one whose transaction committed after a later event was
// acknowledged (the server keeps the acknowledged set, not a position in the log); bad parameters are 400s with a
// stable code, another token's listener is absent.

const db = useTestDatabase();
const ADMIN_TOKEN = 'admin-listen-test-token-0123456789';
let receiver: Receiver;
const call = adminCaller(() => receiver.managementUrl);
const tokens: Record<string, string> = {};

interface Listened {
  provider: string;
  key: string;
  type: string;
  id: string;
  body: string;
}

beforeAll(async () => {
  receiver = await startReceiver(parseConfig({ ...receiverEnv(db.url), PORT: '0', ADMIN_TOKEN }), {
    logger: memoryLogger('warn').logger,
  });
  // The billing group's queues, which its worker would create: the receiver sends its events there.
  const boss = await startTestBoss(db.url);
  await ensureQueues(boss, undefined, 'billing');
  await boss.stop({ graceful: false, close: true });
  await sql(
    db.url,
    `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
       ('stripe', 'checkout.session.completed', 'fulfil', 'database', 0, 'default'),
       ('stripe', 'customer.created', 'welcome', 'external', 0, 'default'),
       ('stripe', 'invoice.paid', 'syncLedger', 'database', 0, 'billing')`,
  );
  for (const [name, role, groups] of [
    ['default-dev', 'operator', ['default']],
    ['billing-dev', 'operator', ['billing']],
    ['viewer-dev', 'viewer', null],
  ] as const) {
    const created = await call(ADMIN_TOKEN, 'POST', '/tokens', { name, role, groups });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    tokens[name] = created.body.token as string;
  }
});
afterAll(async () => {
  await receiver?.close();
});

async function record(type: string): Promise<string> {
  const delivery = stripeEventOf(type);
  const answer = await post(receiver.url, delivery);
  expect(answer.status, answer.body).toBe(200);
  return delivery.key;
}

async function startListening(token: string, options: Record<string, unknown> = {}): Promise<string> {
  const started = await call(token, 'POST', '/listeners', options);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body.id as string;
}

const poll = async (token: string, id: string, wait = 0) => {
  const answer = await call(token, 'GET', `/listeners/${id}/events?wait=${wait}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.events as Listened[];
};

const ack = (token: string, id: string, keys: string[]) =>
  call(token, 'POST', `/listeners/${id}/acks`, {
    events: keys.map((key) => ({ provider: 'stripe', key })),
  });

describe('/admin/listeners', () => {
  it('streams the token’s events oldest first, never an acknowledged one, and one committed late', async () => {
    const mine = await startListening(tokens['default-dev']!);
    const billing = await startListening(tokens['billing-dev']!);
    const first = await record('checkout.session.completed');
    const second = await record('checkout.session.completed');
    const invoice = await record('invoice.paid');

    const events = await poll(tokens['default-dev']!, mine, 5);
    expect(events.map((e) => e.key)).toEqual([first, second]);
    const [one] = events;
    expect(one!.id).toMatch(/^wi_e_/);
    expect(JSON.parse(one!.body)).toMatchObject({
      provider: 'stripe',
      type: 'checkout.session.completed',
      key: first,
      id: one!.id,
      payload: { id: first, data: { object: { id: `obj_${first}` } } },
    });
    expect((await poll(tokens['billing-dev']!, billing)).map((e) => e.key)).toEqual([invoice]);

    expect((await ack(tokens['default-dev']!, mine, [first])).body).toEqual({ acknowledged: 1 });
    expect((await ack(tokens['default-dev']!, mine, [first])).body).toEqual({ acknowledged: 0 });
    expect((await poll(tokens['default-dev']!, mine)).map((e) => e.key)).toEqual([second]);

    // A transaction that started before `first`'s (so its received_at is earlier) and committed after `first`
    // was acknowledged: a position in the log would have passed it.
    await sql(
      db.url,
      `insert into webhook_events (provider, event_id, type, received_at)
       select 'stripe', 'evt_late', type, received_at - interval '1 millisecond'
         from webhook_events where event_id = $1`,
      [first],
    );
    expect((await poll(tokens['default-dev']!, mine)).map((e) => e.key)).toEqual(['evt_late', second]);
    await ack(tokens['default-dev']!, mine, ['evt_late', second]);
    expect(await poll(tokens['default-dev']!, mine)).toEqual([]);

    expect((await call(tokens['default-dev']!, 'DELETE', `/listeners/${mine}`)).status).toBe(200);
    const gone = await call(tokens['default-dev']!, 'GET', `/listeners/${mine}/events?wait=0`);
    expect([gone.status, gone.body.error?.code]).toEqual([404, 'unknown_listener']);
    const audit = await sql(db.url, `select actor, action from audit_log where target = $1 order by id`, [
      `listener ${mine}`,
    ]);
    expect(audit.rows).toEqual([
      { actor: 'token:default-dev', action: 'listen_started' },
      { actor: 'token:default-dev', action: 'listen_stopped' },
    ]);
  });

  // The poll asks to wait 55 s, longer than the test may run: it must answer when the event arrives.
  it('answers a waiting poll when a matching event arrives', { timeout: 40_000 }, async () => {
    const id = await startListening(tokens['default-dev']!, { types: ['checkout.*'], body: 'raw' });
    const waiting = poll(tokens['default-dev']!, id, 55);
    await record('customer.created');
    const key = await record('checkout.session.completed');
    const [event, ...more] = await waiting;
    expect(more).toEqual([]);
    expect(event!.key).toBe(key);
    expect(JSON.parse(event!.body)).toMatchObject({ id: key, type: 'checkout.session.completed' });
  });

  it('refuses bad parameters with 400 invalid_request naming the field', async () => {
    const token = tokens['default-dev']!;
    const id = await startListening(token);
    const cases: [string, string, unknown, string][] = [
      ['POST', '/listeners', { group: 'Not A Group' }, 'group'],
      ['POST', '/listeners', { types: Array.from({ length: 21 }, () => 'a.*') }, 'types'],
      ['POST', '/listeners', { types: [''] }, 'types.0'],
      ['POST', '/listeners', { body: 'xml' }, 'body'],
      ['POST', '/listeners', { since: 'yesterday' }, 'since'],
      ['GET', '/listeners/not-a-uuid/events', undefined, 'listener id'],
      ['GET', `/listeners/${id}/events?wait=999`, undefined, 'wait'],
      ['GET', `/listeners/${id}/events?limit=0`, undefined, 'limit'],
      ['GET', `/listeners/${id}/events?cursor=x`, undefined, 'cursor'],
      ['POST', `/listeners/${id}/acks`, { events: [] }, 'events'],
      ['POST', `/listeners/${id}/acks`, { events: [{ provider: 'Stripe!', key: 'k' }] }, 'provider'],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(token, method, path, body);
      expect([path, answer.status, answer.body.error?.code]).toEqual([path, 400, 'invalid_request']);
      expect(answer.body.error?.message).toContain(field);
    }
  });

  it('refuses a viewer, a group outside the token’s, and another token’s listener', async () => {
    const viewer = await call(tokens['viewer-dev']!, 'POST', '/listeners', {});
    expect([viewer.status, viewer.body.error?.code]).toEqual([403, 'forbidden']);
    const other = await call(tokens['billing-dev']!, 'POST', '/listeners', { group: 'default' });
    expect([other.status, other.body.error?.code]).toEqual([403, 'forbidden']);

    const id = await startListening(tokens['default-dev']!);
    for (const [method, path, body] of [
      ['GET', `/listeners/${id}/events?wait=0`, undefined],
      ['POST', `/listeners/${id}/acks`, { events: [{ provider: 'stripe', key: 'evt_1' }] }],
      ['DELETE', `/listeners/${id}`, undefined],
    ] as const) {
      const answer = await call(tokens['billing-dev']!, method, path, body);
      expect([answer.status, answer.body.error?.code]).toEqual([404, 'unknown_listener']);
    }
    const acks = await sql(db.url, 'select count(*)::int as n from listener_acks where listener_id = $1', [
      id,
    ]);
    expect(acks.rows).toEqual([{ n: 0 }]);
  });
});
