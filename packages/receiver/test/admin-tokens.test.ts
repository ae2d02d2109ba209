import { useTestDatabase } from '@webhook-inbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, startReceiver, type Receiver } from '../src/index.ts';
import { adminCaller } from './admin-client.ts';
import { memoryLogger, sql } from './helpers.ts';
import { receiverEnv, stripeDelivery } from '@webhook-inbox/scenarios/receiver';

// Scoped API tokens on the admin API, over real HTTP: the break-glass ADMIN_TOKEN creates them; each acts as its
// role (403 `forbidden` naming the permission) and its consumer groups (other groups' events are absent, other
// groups' effects untouchable); every change is in audit_log with its actor, role, method and address.

const db = useTestDatabase();
const ADMIN_TOKEN = 'admin-tokens-test-token-0123456789';
let receiver: Receiver;
const tokens: Record<string, string> = {};
const DEFAULT_EVENT = 'evt_tokens_checkout';
const BILLING_EVENT = 'evt_tokens_invoice';

beforeAll(async () => {
  receiver = await startReceiver(parseConfig({ ...receiverEnv(db.url), PORT: '0', ADMIN_TOKEN }), {
    logger: memoryLogger('warn').logger,
  });
  const invoice = JSON.stringify({
    id: BILLING_EVENT,
    object: 'event',
    type: 'invoice.paid',
    created: 1_700_000_000,
    data: { object: { id: 'in_1', object: 'invoice', customer: 'cus_billing' } },
  });
  for (const delivery of [
    stripeDelivery({ id: DEFAULT_EVENT }),
    stripeDelivery({ id: BILLING_EVENT, body: invoice }),
  ]) {
    const response = await fetch(new URL(delivery.path, receiver.url), {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect(response.status).toBe(200);
  }
  // The effects each group's worker would record at its start: the default group's for checkouts, billing's for
  // invoices. Recorded after the deliveries: the billing group's worker (and its queue) never ran, so replaying its
  // event is a backfill.
  await sql(
    db.url,
    `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
       ('stripe', 'checkout.session.completed', 'provisionAccount', 'database', 0, 'default'),
       ('stripe', 'checkout.session.completed', 'sendWelcomeEmail', 'external', 1, 'default'),
       ('stripe', 'invoice.paid', 'billingInvoiceEmail', 'external', 0, 'billing')`,
  );
  // The default group's welcome email went out: forcing it again is what the attack tries.
  await sql(
    db.url,
    `insert into effect_runs (provider, event_id, effect, status, idempotency_key, completed_at)
     values ('stripe', $1, 'sendWelcomeEmail', 'completed', 'welcome:cus_1', now())`,
    [DEFAULT_EVENT],
  );
});
afterAll(async () => {
  await receiver?.close();
});

const call = adminCaller(() => receiver.managementUrl);

const auditRows = async (action: string) =>
  (
    await sql(
      db.url,
      `select actor, role, auth_method, target, details, remote_address from audit_log where action = $1 order by id`,
      [action],
    )
  ).rows as {
    actor: string;
    role: string;
    auth_method: string;
    target: string;
    details: Record<string, unknown>;
    remote_address: string;
  }[];

/** What a replay would change: the event's status, its jobs, its ledger, and its group rows. */
const stateOf = async (eventId: string) =>
  (
    await sql(
      db.url,
      `select (select status from webhook_events where event_id = $1) as status,
              (select count(*)::int from pgboss.job where data->>'eventId' = $1) as jobs,
              (select json_agg(json_build_object('effect', effect, 'status', status, 'forced', forced_at is not null))
                 from effect_runs where event_id = $1) as runs,
              (select count(*)::int from webhook_event_groups where event_id = $1) as groups,
              (select count(*)::int from audit_log where target = 'stripe ' || $1) as audited`,
      [eventId],
    )
  ).rows[0] as Record<string, unknown>;

describe('API tokens on the admin API', () => {
  it('are created by the break-glass admin token, shown once, and audited as break-glass', async () => {
    for (const [name, role, groups] of [
      ['billing-operator', 'operator', ['billing']],
      ['support-viewer', 'viewer', null],
      ['platform-operator', 'operator', null],
    ] as const) {
      const created = await call(ADMIN_TOKEN, 'POST', '/tokens', { name, role, groups, expiresInDays: 7 });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ name, role, groups, status: 'active', createdBy: 'break-glass' });
      expect(created.body).not.toHaveProperty('hash');
      tokens[name] = created.body.token as string;
    }
    const listed = await call(ADMIN_TOKEN, 'GET', '/tokens');
    expect(JSON.stringify(listed.body)).not.toContain(tokens['billing-operator']);
    expect((listed.body.tokens as { name: string }[]).map((t) => t.name)).toEqual([
      'platform-operator',
      'support-viewer',
      'billing-operator',
    ]);
    expect(await auditRows('token_created')).toEqual(
      ['billing-operator', 'support-viewer', 'platform-operator'].map((name) => ({
        actor: 'break-glass',
        role: 'admin',
        auth_method: 'break_glass',
        target: `token ${name}`,
        details: expect.objectContaining({ expiresAt: expect.any(String) as unknown }) as unknown,
        remote_address: '127.0.0.1',
      })),
    );
    const taken = await call(ADMIN_TOKEN, 'POST', '/tokens', { name: 'support-viewer', role: 'viewer' });
    expect({ status: taken.status, code: taken.body.error?.code }).toEqual({
      status: 409,
      code: 'token_exists',
    });
    const bad = await call(ADMIN_TOKEN, 'POST', '/tokens', { name: 'x', role: 'root' });
    expect({ status: bad.status, code: bad.body.error?.code }).toEqual({
      status: 400,
      code: 'invalid_request',
    });
  });

  it("refuses a billing-scoped operator the default group's effects: 403, and nothing changes", async () => {
    const before = await stateOf(DEFAULT_EVENT);
    const token = tokens['billing-operator']!;
    for (const body of [{ group: 'default', forceEffect: 'sendWelcomeEmail' }, { group: 'default' }, {}]) {
      const answer = await call(token, 'POST', `/events/stripe/${DEFAULT_EVENT}/replay`, body);
      expect({ status: answer.status, code: answer.body.error?.code }, JSON.stringify(body)).toEqual({
        status: 403,
        code: 'forbidden',
      });
    }
    // Its own group, on an event of a type its group does not subscribe to: absent, not replayed.
    const hidden = await call(token, 'POST', `/events/stripe/${DEFAULT_EVENT}/replay`, { group: 'billing' });
    expect({ status: hidden.status, code: hidden.body.error?.code }).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect(await stateOf(DEFAULT_EVENT)).toEqual(before);
    expect(await auditRows('replay_forced')).toEqual([]);
  });

  it("shows a billing-scoped token only its groups' events", async () => {
    const token = tokens['billing-operator']!;
    const listed = await call(token, 'GET', '/events?limit=50');
    expect((listed.body.events as { eventId: string }[]).map((e) => e.eventId)).toEqual([BILLING_EVENT]);
    const hidden = await call(token, 'GET', `/events/stripe/${DEFAULT_EVENT}`);
    expect({ status: hidden.status, code: hidden.body.error?.code }).toEqual({
      status: 404,
      code: 'not_found',
    });
    const own = await call(token, 'GET', `/events/stripe/${BILLING_EVENT}`);
    expect(own.status).toBe(200);
    expect(own.body.payload).toMatchObject({ id: BILLING_EVENT });
    // The unscoped tokens see both.
    const all = await call(tokens['support-viewer']!, 'GET', '/events?limit=50');
    expect((all.body.events as { eventId: string }[]).map((e) => e.eventId).sort()).toEqual(
      [BILLING_EVENT, DEFAULT_EVENT].sort(),
    );
  });

  it("shows a billing-scoped token only its groups' part of an event whose type another group also handles", async () => {
    // The default group handles invoices too, and a shipping group has the event: their ledger row, attempt and
    // group row are theirs, not billing's.
    await sql(
      db.url,
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', 'invoice.paid', 'recordInvoice', 'database', 0, 'default')`,
    );
    await sql(
      db.url,
      `with run as (
         insert into effect_runs (provider, event_id, effect, status, idempotency_key, completed_at)
         values ('stripe', $1, 'recordInvoice', 'completed', 'invoice:in_1', now())),
       attempt as (
         insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms,
                                      outcome, worker)
         values ('stripe', $1, 'recordInvoice', 1, now(), now(), 3, 'completed', 'test/1'))
       insert into webhook_event_groups (provider, event_id, consumer_group) values ('stripe', $1, 'shipping')`,
      [BILLING_EVENT],
    );
    try {
      const seenBy = async (token: string) => {
        const shown = await call(token, 'GET', `/events/stripe/${BILLING_EVENT}`);
        expect(shown.status).toBe(200);
        const body = shown.body as {
          effects: { effect: string }[];
          attemptHistory: { effect: string }[];
          groups: { group: string }[];
        };
        return {
          effects: body.effects.map((run) => run.effect),
          attempts: body.attemptHistory.map((attempt) => attempt.effect),
          groups: body.groups.map((row) => row.group),
        };
      };
      expect(await seenBy(tokens['billing-operator']!)).toEqual({ effects: [], attempts: [], groups: [] });
      expect(await seenBy(tokens['support-viewer']!)).toEqual({
        effects: ['recordInvoice'],
        attempts: ['recordInvoice'],
        groups: ['shipping'],
      });
    } finally {
      await sql(
        db.url,
        `with attempts as (delete from effect_attempts where event_id = $1),
              groups as (delete from webhook_event_groups where event_id = $1 and consumer_group = 'shipping')
         delete from effect_runs where event_id = $1 and effect = 'recordInvoice'`,
        [BILLING_EVENT],
      );
      await sql(db.url, `delete from effect_routes where effect = 'recordInvoice'`);
    }
  });

  it("lets the billing operator replay its group's effects, audited with the token as actor", async () => {
    const replayed = await call(
      tokens['billing-operator']!,
      'POST',
      `/events/stripe/${BILLING_EVENT}/replay`,
      {
        group: 'billing',
      },
    );
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(202);
    expect(replayed.body).toMatchObject({
      group: 'billing',
      enqueued: true,
      effects: ['billingInvoiceEmail'],
    });
    expect(await auditRows('replay')).toEqual([
      {
        actor: 'token:billing-operator',
        role: 'operator',
        auth_method: 'api_token',
        target: `stripe ${BILLING_EVENT}`,
        details: expect.objectContaining({ group: 'billing', forced: null }) as unknown,
        remote_address: '127.0.0.1',
      },
    ]);
    const forced = await call(tokens['billing-operator']!, 'POST', `/events/stripe/${BILLING_EVENT}/replay`, {
      group: 'billing',
      forceEffect: 'billingInvoiceEmail',
    });
    expect(forced.status).toBe(403);
    expect(forced.body.error?.message).toMatch(/lacks permission force/);
    const lastUsed = await sql(db.url, `select last_used_at from api_tokens where name = 'billing-operator'`);
    expect((lastUsed.rows[0] as { last_used_at: unknown }).last_used_at).toBeInstanceOf(Date);
  });

  it('holds each role to its permissions; the break-glass admin forces, audited as break-glass', async () => {
    const viewer = tokens['support-viewer']!;
    const shown = await call(viewer, 'GET', `/events/stripe/${DEFAULT_EVENT}`);
    expect(shown.body).toMatchObject({ payload: null, payloadHidden: true });
    const replay = await call(viewer, 'POST', `/events/stripe/${DEFAULT_EVENT}/replay`);
    expect({ status: replay.status, message: replay.body.error?.message }).toEqual({
      status: 403,
      message: 'role viewer lacks permission replay',
    });
    const operator = tokens['platform-operator']!;
    for (const [method, path, body] of [
      ['GET', '/tokens', undefined],
      ['POST', '/tokens', { name: 'mine', role: 'admin' }],
      ['DELETE', '/tokens/support-viewer', undefined],
      ['POST', `/events/stripe/${DEFAULT_EVENT}/replay`, { forceEffect: 'sendWelcomeEmail' }],
    ] as const) {
      const answer = await call(operator, method, path, body);
      expect({ status: answer.status, code: answer.body.error?.code }, `${method} ${path}`).toEqual({
        status: 403,
        code: 'forbidden',
      });
    }
    const forced = await call(ADMIN_TOKEN, 'POST', `/events/stripe/${DEFAULT_EVENT}/replay`, {
      forceEffect: 'sendWelcomeEmail',
    });
    expect(forced.status).toBe(202);
    expect(await auditRows('replay_forced')).toEqual([
      {
        actor: 'break-glass',
        role: 'admin',
        auth_method: 'break_glass',
        target: `stripe ${DEFAULT_EVENT}`,
        details: expect.objectContaining({ group: 'default', forced: 'sendWelcomeEmail' }) as unknown,
        remote_address: '127.0.0.1',
      },
    ]);
  });

  it('records a replay that finds nothing to run, attributed (was unaudited)', async () => {
    await sql(
      db.url,
      `insert into effect_runs (provider, event_id, effect, status, idempotency_key, completed_at)
       values ('stripe', $1, 'billingInvoiceEmail', 'completed', 'invoice-email:in_1', now())
       on conflict (provider, event_id, effect) do update set status = 'completed', completed_at = now()`,
      [BILLING_EVENT],
    );
    const before = (await auditRows('replay')).length;
    const nothing = await call(
      tokens['billing-operator']!,
      'POST',
      `/events/stripe/${BILLING_EVENT}/replay`,
      {
        group: 'billing',
      },
    );
    expect(nothing.body).toMatchObject({ effects: [], enqueued: false });
    expect((await auditRows('replay')).slice(before)).toEqual([
      {
        actor: 'token:billing-operator',
        role: 'operator',
        auth_method: 'api_token',
        target: `stripe ${BILLING_EVENT}`,
        details: expect.objectContaining({
          group: 'billing',
          effects: [],
          outcome: 'nothing_to_replay',
        }) as unknown,
        remote_address: '127.0.0.1',
      },
    ]);
  });

  it('refuses a revoked or expired token with its own 401 code', async () => {
    const revoked = await call(ADMIN_TOKEN, 'DELETE', '/tokens/support-viewer');
    expect(revoked.body).toMatchObject({ status: 'revoked', revokedBy: 'break-glass' });
    const after = await call(tokens['support-viewer']!, 'GET', '/events');
    expect({ status: after.status, code: after.body.error?.code }).toEqual({
      status: 401,
      code: 'token_revoked',
    });
    expect((await auditRows('token_revoked')).map((r) => [r.actor, r.target])).toEqual([
      ['break-glass', 'token support-viewer'],
    ]);
    await sql(
      db.url,
      `update api_tokens set expires_at = now() - interval '1 second' where name = 'platform-operator'`,
    );
    const expired = await call(tokens['platform-operator']!, 'GET', '/events');
    expect({ status: expired.status, code: expired.body.error?.code }).toEqual({
      status: 401,
      code: 'token_expired',
    });
    const unknown = await call('whi_not-a-token-anyone-made', 'GET', '/events');
    expect({ status: unknown.status, code: unknown.body.error?.code }).toEqual({
      status: 401,
      code: 'unauthorized',
    });
  });
});
