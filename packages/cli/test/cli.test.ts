import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { createTestDatabase, insertEvents, useTempFiles, useTestDatabase } from '@webhook-inbox/testing';
import { recordEffectRoutes } from '@webhook-inbox/inbox';
import type { Receiver } from '@webhook-inbox/receiver';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, useCliReceiver, type Run } from './cli-process.ts';

// Every test runs the real CLI, several times: a process start is about a second on a quiet machine and up to ten
// under the load of a full parallel run, which the default 30 s per test does not cover.
vi.setConfig({ testTimeout: 180_000 });

const STRIPE_SECRET = 'whsec_cli_test_secret';
const SHOPIFY_SECRET = 'shopify_cli_test_secret';
const database = useTestDatabase();
const payloads = useTempFiles('cli-payload-');
let receiver: Receiver;
let pool: pg.Pool;

/** Runs the CLI as a real process, as an operator would. */
function inbox(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return runCli(args, {
    DATABASE_URL: database.url,
    STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
    SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
    RECEIVER_URL: receiver.url,
    // No `.data/` of a developer's `pnpm start` may leak into the test.
    WEBHOOK_INBOX_DATA_DIR: '/nonexistent',
    ...env,
  });
}

const cli = useCliReceiver(database, {
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  SHOPIFY_WEBHOOK_SECRET: SHOPIFY_SECRET,
});
beforeAll(() => {
  receiver = cli.receiver();
  pool = cli.pool();
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
      `select payload->>'id' as id from webhook_event_payloads where provider = 'shopify' and event_id = $1`,
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

  it('finds events with --search: a subject value as written (a Stripe id keeps its case), the start of a key', async () => {
    const sent = await inbox(['send', 'stripe', 'checkout.session.completed', '--json']);
    const { eventId } = JSON.parse(sent.stdout) as { eventId: string };
    const { rows } = await pool.query<{ subject: string[] | null }>(
      `select subject from webhook_events where provider = 'stripe' and event_id = $1`,
      [eventId],
    );
    const [customer] = rows[0]?.subject ?? [];
    expect(customer).toMatch(/^cus_/);
    for (const search of [customer!, eventId.slice(0, -3)]) {
      const run = await inbox(['events', '--search', search, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const page = JSON.parse(run.stdout) as { events: { eventId: string; subject: string | null }[] };
      expect(
        page.events.map((e) => e.eventId),
        search,
      ).toContain(eventId);
      expect(page.events.find((e) => e.eventId === eventId)?.subject).toContain(customer);
    }
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

  it('exits 2 with the flag named for a --limit, --cursor or --since it cannot use', async () => {
    const forged = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const [args, flag] of [
      [['events', '--limit', '501'], '--limit'],
      [['events', '--cursor', 'not-a-cursor'], '--cursor'],
      [['events', '--cursor', forged(['2026-02-30T00:00:00.000000Z', 'stripe', 'evt_1'])], '--cursor'],
      [['events', '--since', '99999999999999999999w'], '--since'],
      [['replay', '--status', 'dead', '--since', '99999999999999999999w'], '--since'],
    ] as const) {
      const run = await inbox([...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(flag);
    }
  });

  it('explains a missing database', async () => {
    const run = await inbox(['events'], { DATABASE_URL: undefined });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DATABASE_URL is not set');
  });

  it('refuses a DATABASE_POOLER it does not know (exit 2) and takes the known ones in any case', async () => {
    const refused = await inbox(['events'], { DATABASE_POOLER: 'session' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('DATABASE_POOLER must be one of none, transaction');
    const accepted = await inbox(['events', '--json'], { DATABASE_POOLER: ' Transaction ' });
    expect(accepted.code, accepted.stderr).toBe(0);
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

describe('inbox purge', () => {
  it('drops old payloads of finished events and refuses a key retention under 7 days', async () => {
    await insertEvents(
      pool,
      `insert into webhook_events (provider, event_id, type, status, received_at)
       values ('stripe', 'evt_old_done', 't', 'processed', now() - interval '40 days'),
              ('stripe', 'evt_old_inflight', 't', 'failed', now() - interval '40 days'),
              ('stripe', 'evt_recent_done', 't', 'processed', now() - interval '1 day')`,
    );
    const run = await inbox(['purge', '--older-than', '30d', '--json']);
    expect(run.code, run.stderr).toBe(0);
    // The day 40 days ago holds an event in flight: kept, without its finished event's payload.
    expect(JSON.parse(run.stdout)).toMatchObject({
      payloadsPurged: 1,
      payloadPartitionsKept: 1,
      keysDeleted: 0,
      complete: true,
    });
    const { rows } = await pool.query<{ event_id: string; purged: boolean }>(
      `select event_id, not exists (select from webhook_event_payloads p
                                     where p.event_id = e.event_id and p.received_at = e.received_at) as purged
         from webhook_events e where event_id like 'evt_old%' or event_id = 'evt_recent_done' order by 1`,
    );
    expect(rows).toEqual([
      { event_id: 'evt_old_done', purged: true },
      { event_id: 'evt_old_inflight', purged: false },
      { event_id: 'evt_recent_done', purged: false },
    ]);

    // Without --json: what it did, and where the time went.
    const again = await inbox(['purge', '--older-than', '30d']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^payloads purged: 0 \(days ended before .*: 0 dropped whole, 1 kept/m);
    expect(again.stdout).toMatch(
      /^took \d+ ms: partitions \d+ ms, keys \d+ ms, payloads \d+ ms, history \d+ ms, audit \d+ ms$/m,
    );

    const refused = await inbox(['purge', '--older-than', '30d', '--keys-older-than', '3d']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('at least 7');
  });
});

describe('inbox purge: refusals and dry runs leave every row as it was', () => {
  const ids = ['evt_guard_1d', 'evt_guard_10d', 'evt_guard_40d'];
  const rows = async () =>
    (
      await pool.query<{ event_id: string; payload: boolean; runs: number }>(
        `select e.event_id,
                exists (select from webhook_event_payloads p
                         where p.event_id = e.event_id and p.received_at = e.received_at) as payload,
                (select count(*)::int from effect_runs r where r.provider = e.provider and r.event_id = e.event_id) as runs
           from webhook_events e where e.event_id = any($1) order by e.received_at desc`,
        [ids],
      )
    ).rows;

  beforeAll(async () => {
    await insertEvents(
      pool,
      `insert into webhook_events (provider, event_id, type, status, received_at)
       select 'stripe', id, 't', 'dead', now() - days * interval '1 day'
         from unnest($1::text[], array[1, 10, 40]) as t(id, days)`,
      [ids],
    );
    await pool.query(
      `insert into effect_runs (provider, event_id, effect, status, idempotency_key)
       select 'stripe', id, effect, 'failed', id || ':' || effect
         from unnest($1::text[]) as id, unnest(array['a', 'b']) as effect`,
      [ids],
    );
  });

  it('refuses --older-than under the 3-day retry window without --force (exit 2), touching nothing', async () => {
    const before = await rows();
    expect(before.map((r) => [r.payload, r.runs])).toEqual([
      [true, 2],
      [true, 2],
      [true, 2],
    ]);
    for (const age of ['1ms', '2d']) {
      const refused = await inbox(['purge', '--older-than', age]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('retry window');
      expect(refused.stderr).toContain('--force');
    }
    expect(await rows()).toEqual(before);
  });

  it('--dry-run counts per table what a purge would change, and changes nothing', async () => {
    const before = await rows();
    const run = await inbox([
      'purge',
      '--older-than',
      '5d',
      '--keys-older-than',
      '30d',
      '--dry-run',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // At least the 40-day event with its 2 ledger rows, and the 10-day one's payload (other tests' rows too).
    const counts = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(counts).toMatchObject({ dryRun: true, batches: 0 });
    expect(counts.keysDeleted).toBeGreaterThanOrEqual(1);
    expect(counts.effectRunsDeleted).toBeGreaterThanOrEqual(2);
    expect(counts.payloadsPurged).toBeGreaterThanOrEqual(1);
    const human = await inbox(['purge', '--older-than', '1ms', '--force', '--dry-run']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('dry run: nothing was changed');
    expect(human.stdout).toMatch(/webhook_event_payloads: drop \d+ payloads/);
    expect(human.stdout).toMatch(/effect_runs: delete \d+ rows/);
    expect(await rows()).toEqual(before);
  });

  it('--force purges under the retry window, exactly what its dry run counted', async () => {
    const args = ['purge', '--older-than', '1ms', '--keys-older-than', '30d', '--force', '--json'];
    const predicted = JSON.parse((await inbox([...args, '--dry-run'])).stdout) as Record<string, unknown>;
    const run = await inbox(args);
    expect(run.code, run.stderr).toBe(0);
    const done = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(done.dryRun).toBe(false);
    for (const count of ['keysDeleted', 'effectRunsDeleted', 'payloadsPurged']) {
      expect(done[count], count).toBe(predicted[count]);
    }
    expect(await rows()).toEqual([
      { event_id: 'evt_guard_1d', payload: false, runs: 2 },
      { event_id: 'evt_guard_10d', payload: false, runs: 2 },
    ]);
  });
});

describe('inbox reconcile', () => {
  let stripeApi: Server;
  const requests: string[] = [];
  const events = [1, 2, 3].map((n) => ({
    id: `evt_reconcile_${n}`,
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000) - n * 60,
    data: { object: { id: `cs_${n}`, object: 'checkout.session', customer: `cus_r${n}` } },
  }));

  beforeAll(async () => {
    // The official SDK, pointed at a local server that answers like Stripe's Events API.
    stripeApi = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', url: '/v1/events', has_more: false, data: events }));
    });
    await new Promise<void>((resolve) => stripeApi.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => stripeApi.close(() => resolve())));

  it('records the events we never received, once', async () => {
    const env = {
      STRIPE_API_KEY: 'sk_test_cli',
      STRIPE_API_BASE: `http://127.0.0.1:${(stripeApi.address() as AddressInfo).port}`,
    };
    // One of them arrived as a webhook already.
    await inbox(['send', 'stripe', 'checkout.session.completed', '--event-id', 'evt_reconcile_1']);

    const first = await inbox(['reconcile', 'stripe', '--since', '1d', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      scanned: 3,
      missing: 2,
      ingested: 2,
      alreadyPresent: 1,
    });
    expect(requests.every((url) => url.startsWith('/v1/events'))).toBe(true);

    const second = await inbox(['reconcile', 'stripe', '--since', '1d', '--json'], env);
    expect(JSON.parse(second.stdout)).toMatchObject({
      scanned: 3,
      missing: 0,
      ingested: 0,
      alreadyPresent: 3,
    });
    const { rows } = await pool.query(
      `select event_id, source from webhook_events where event_id like 'evt_reconcile_%' order by 1`,
    );
    expect(rows).toEqual([
      { event_id: 'evt_reconcile_1', source: 'webhook' },
      { event_id: 'evt_reconcile_2', source: 'reconciled' },
      { event_id: 'evt_reconcile_3', source: 'reconciled' },
    ]);
    const jobs = await pool.query(
      `select count(*)::int as n from pgboss.job where name = 'webhook-events' and data->>'eventId' like 'evt_reconcile_%'`,
    );
    expect(jobs.rows).toEqual([{ n: 3 }]);
    // Each run is in the audit log as the OS user at this host, with what it recorded.
    const audited = await pool.query(
      `select actor, auth_method, (details->>'ingested')::int as ingested from audit_log where action = 'reconcile' order by id`,
    );
    const actor = `${os.userInfo().username}@${os.hostname()}`;
    expect(audited.rows).toEqual([
      { actor, auth_method: 'local_cli', ingested: 2 },
      { actor, auth_method: 'local_cli', ingested: 0 },
    ]);
  });

  it('explains a missing STRIPE_API_KEY', async () => {
    const run = await inbox(['reconcile', 'stripe']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('STRIPE_API_KEY');
  });
});

describe('inbox replay', () => {
  it('dry-runs a replay of one event: lists the effects that would run, changes nothing', async () => {
    const sent = JSON.parse(
      (await inbox(['send', 'stripe', 'checkout.session.completed', '--json'])).stdout,
    ) as {
      eventId: string;
    };
    const before = await pool.query(`select count(*)::int as n from pgboss.job where data->>'eventId' = $1`, [
      sent.eventId,
    ]);
    const run = await inbox(['replay', 'stripe', sent.eventId, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      expect.objectContaining({
        eventId: sent.eventId,
        effects: ['provisionAccount', 'sendWelcomeEmail', 'recordCheckoutSubscription'],
        enqueued: false,
        dryRun: true,
      }),
    ]);
    const after = await pool.query(`select count(*)::int as n from pgboss.job where data->>'eventId' = $1`, [
      sent.eventId,
    ]);
    expect(after.rows).toEqual(before.rows);
  });

  it('replays for real through the queue, and explains wrong usage', async () => {
    const sent = JSON.parse(
      (await inbox(['send', 'stripe', 'customer.subscription.created', '--json'])).stdout,
    ) as {
      eventId: string;
    };
    const run = await inbox(['replay', 'stripe', sent.eventId, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      expect.objectContaining({ effects: ['upsertSubscription'], enqueued: true }),
    ]);
    const jobs = await pool.query(`select count(*)::int as n from pgboss.job where data->>'eventId' = $1`, [
      sent.eventId,
    ]);
    expect(jobs.rows).toEqual([{ n: 2 }]);

    expect((await inbox(['replay', 'stripe', 'evt_nope'])).code).toBe(3);
    expect((await inbox(['replay'])).code).toBe(2);
    expect((await inbox(['replay', 'stripe', sent.eventId, '--force-effect', 'nope'])).code).toBe(2);
    const bulk = await inbox(['replay', '--status', 'dead', '--since', '1h', '--dry-run']);
    expect(bulk.code, bulk.stderr).toBe(0);
    expect(bulk.stdout).toContain('dry run: nothing was changed');
    expect((await inbox(['replay', 'stripe', sent.eventId, '--limit', '3'])).code).toBe(2);
    expect((await inbox(['replay', '--status', 'dead', '--limit', '0'])).code).toBe(2);
  });

  it("--group: a consumer group's effects and queue; a bulk replay without --status backfills the group", async () => {
    const sent = JSON.parse(
      (await inbox(['send', 'stripe', 'customer.subscription.updated', '--json'])).stdout,
    ) as { eventId: string };
    const early = await inbox(['replay', 'stripe', sent.eventId, '--group', 'billing']);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain('no worker of consumer group "billing" has recorded its effects yet');
    const bad = await inbox(['replay', 'stripe', sent.eventId, '--group', 'Billing']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--group: invalid consumer group');

    await recordEffectRoutes(
      pool,
      [
        {
          provider: 'stripe',
          eventType: 'customer.subscription.updated',
          effect: 'recordRevenue',
          kind: 'database',
          position: 0,
        },
      ],
      'billing',
    );
    try {
      const backfill = ['replay', '--group', 'billing', '--provider', 'stripe', '--since', '1h', '--json'];
      const dry = await inbox([...backfill, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout)).toContainEqual(
        expect.objectContaining({
          eventId: sent.eventId,
          group: 'billing',
          previousStatus: 'none',
          effects: ['recordRevenue'],
          enqueued: false,
        }),
      );
      const run = await inbox(backfill);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toContainEqual(
        expect.objectContaining({ eventId: sent.eventId, group: 'billing', enqueued: true }),
      );
      const rows = await pool.query(
        `select consumer_group, status from webhook_event_groups where event_id = $1`,
        [sent.eventId],
      );
      expect(rows.rows).toEqual([{ consumer_group: 'billing', status: 'received' }]);
      const jobs = await pool.query(
        `select count(*)::int as n from pgboss.job where name = 'webhook-events.billing' and data->>'eventId' = $1`,
        [sent.eventId],
      );
      expect(jobs.rows).toEqual([{ n: 1 }]);
      const shown = await inbox(['show', 'stripe', sent.eventId]);
      expect(shown.stdout).toContain('consumer groups:');
      expect(shown.stdout).toMatch(/billing\s+received/);
    } finally {
      await pool.query(`delete from effect_routes where consumer_group = 'billing'`);
    }
  });

  it('bulk: replays all 1,053 matching events in chunks, and says how many more remain when --limit stops it', async () => {
    // More than one page (200) and more than the 1,000 a bulk replay once stopped at.
    await insertEvents(
      pool,
      `insert into webhook_events (provider, event_id, type, status, attempts, last_error, received_at)
       select 'stripe', 'evt_bulk_' || lpad(i::text, 5, '0'), 'customer.subscription.created',
              'failed', 1, 'CRM unavailable (503)', now() - interval '1 hour' + i * interval '1 millisecond'
         from generate_series(1, 1053) as i`,
    );
    const failed = async () =>
      (
        await pool.query<{ n: number }>(
          `select count(*)::int as n from webhook_events where event_id like 'evt_bulk_%' and status = 'failed'`,
        )
      ).rows[0]?.n;
    const bulk = ['replay', '--status', 'failed', '--type', 'customer.subscription.created'];

    const limited = await inbox([...bulk, '--limit', '1000']);
    expect(limited.code, limited.stderr).toBe(0);
    expect(limited.stdout).toContain(
      'replayed 1000 of 1053 matching events (1000 queued, 0 with nothing left to run); 53 more remain',
    );
    expect(await failed()).toBe(53);

    const rest = await inbox([...bulk, '--json']);
    expect(rest.code, rest.stderr).toBe(0);
    const results = JSON.parse(rest.stdout) as { eventId: string; enqueued: boolean }[];
    // Oldest first: the 53 the limit left, and only those.
    expect(results.map((r) => r.eventId)).toEqual(
      Array.from({ length: 53 }, (_, i) => `evt_bulk_${String(1001 + i).padStart(5, '0')}`),
    );
    expect(rest.stderr).toContain('replayed 53 of 53 matching events (53 queued');
    expect(rest.stderr).not.toContain('more remain');
    expect(await failed()).toBe(0);
    const jobs = await pool.query(
      `select count(distinct data->>'eventId')::int as n from pgboss.job where data->>'eventId' like 'evt_bulk_%'`,
    );
    expect(jobs.rows).toEqual([{ n: 1053 }]);
  });
});

describe('inbox: parity with the console', () => {
  it('sends any Stripe event type from --payload, signed as it is', async () => {
    const file = payloads.write(
      'refund.json',
      JSON.stringify({
        id: 'evt_refund_cli',
        object: 'event',
        type: 'charge.refunded',
        data: { object: {} },
      }),
    );
    const sent = await inbox(['send', 'stripe', 'charge.refunded', '--payload', file, '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({
      eventId: 'evt_refund_cli',
      deliveries: [{ status: 200 }],
    });
    const wrongType = await inbox(['send', 'stripe', 'charge.captured', '--payload', file]);
    expect(wrongType.code).toBe(2);
    expect(wrongType.stderr).toContain('is a "charge.refunded" event, not "charge.captured"');
  });

  it("lists a consumer group's events and statuses, its failure groups, the stats, and an event's attempts", async () => {
    await pool.query(
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', 'invoice.paid', 'billingSync', 'database', 0, 'billing') on conflict do nothing`,
    );
    await pool.query(
      `insert into webhook_events (provider, event_id, type, status) values ('stripe', 'evt_billing_dead', 'invoice.paid', 'processed')`,
    );
    await pool.query(
      `insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
       values ('stripe', 'evt_billing_dead', 'billing', 'dead', 3, 'billingSync: ledger locked')`,
    );
    await pool.query(
      `insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
       values ('stripe', 'evt_billing_dead', 'billingSync', 'failed', 3, 'k-billing', now(), 'ledger locked')`,
    );
    await pool.query(
      `insert into effect_attempts (provider, event_id, effect, attempt, started_at, finished_at, duration_ms, outcome, error, worker, job_id)
       values ('stripe', 'evt_billing_dead', 'billingSync', 1, now(), now(), 4, 'dead', 'ledger locked', 'host/1', 'job-1')`,
    );

    const dead = await inbox(['events', '--status', 'dead']);
    expect(dead.code, dead.stderr).toBe(0);
    expect(dead.stdout).toContain(
      'consumer group billing: 1 dead (webhook-inbox events --group billing --status dead)',
    );

    const billing = await inbox(['events', '--group', 'billing', '--status', 'dead', '--json']);
    expect(billing.code, billing.stderr).toBe(0);
    expect((JSON.parse(billing.stdout) as { events: unknown[] }).events).toEqual([
      expect.objectContaining({ eventId: 'evt_billing_dead', groups: ['billing:dead'] }),
    ]);

    const failures = await inbox(['failures', '--group', 'billing', '--json']);
    expect(failures.code, failures.stderr).toBe(0);
    expect(JSON.parse(failures.stdout)).toEqual([
      expect.objectContaining({
        group: 'billing',
        effect: 'billingSync',
        fingerprint: 'ledger locked',
        events: 1,
        dead: 1,
      }),
    ]);

    const stats = await inbox(['stats', '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    expect((JSON.parse(stats.stdout) as { groups: unknown[] }).groups).toContainEqual({
      group: 'billing',
      status: 'dead',
      count: 1,
    });

    const shown = await inbox(['show', 'stripe', 'evt_billing_dead']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /attempts:\n.*\nbillingSync\s+1\s+\S+\s+4\s+dead\s+ledger locked\s+host\/1\s+job-1/,
    );

    const operations = await inbox(['operations', '--json']);
    expect(operations.code, operations.stderr).toBe(0);
    expect(JSON.parse(operations.stdout)).toEqual([]);
  });
});
