import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { event, useRecordingDatabase } from './support/recording.ts';
import { InvalidPayloadError, UnavailableError } from '../src/errors.ts';
import { ingest } from '../src/ingest.ts';

// ingest() against real Postgres, on a plain pool and on a pipelined one (the receiver's).

const fixture = useRecordingDatabase();

describe.each([
  ['plain pool', false],
  ['pipelined pool', true],
])('ingest() on a %s', (_name, pipeline) => {
  let pool: pg.Pool;
  beforeAll(() => {
    // One connection: every call reuses it, so a transaction left open (or a pending commit) would show.
    pool = new pg.Pool({ connectionString: fixture.url, max: 1, pipeline });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('runs the event insert and the job insert as statements prepared once on the connection', async () => {
    const e = event();
    await ingest(fixture.deps(pool), e);
    await ingest(fixture.deps(pool), event());
    await ingest(fixture.deps(pool), e);
    // The pool's one connection, new in this test: what it prepared, and how often each ran (the duplicate ran
    // the insert only).
    const { rows } = await pool.query<{ name: string; calls: number }>(
      `select name, (generic_plans + custom_plans)::int as calls from pg_prepared_statements order by name`,
    );
    expect(rows.map((r) => r.name)).toEqual([
      'webhook_inbox_insert_events',
      expect.stringMatching(/^webhook_inbox_job_[0-9a-f]{16}$/),
    ]);
    expect(rows.map((r) => r.calls)).toEqual([3, 2]);
  });

  it('records a new event with its job, then answers duplicate without a second job', async () => {
    const e = event();
    expect(await ingest(fixture.deps(pool), e)).toBe('accepted');
    expect(await ingest(fixture.deps(pool), e)).toBe('duplicate');
    expect(await ingest(fixture.deps(pool), e)).toBe('duplicate');
    expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
    const row = await fixture.admin.query(
      `select p.payload::text as p, e.headers, e.source
         from webhook_events e join webhook_event_payloads p using (provider, event_id, received_at)
        where e.event_id = $1`,
      [e.eventId],
    );
    // jsonb keeps every digit of a number a JS double would round.
    expect(row.rows[0]).toEqual({
      p: '{"id": "x", "amount": 12345678901234567890}',
      headers: { 'x-test': '1' },
      source: 'webhook',
    });
  });

  it('leaves no transaction open across calls (duplicates then new events on the same connection)', async () => {
    const known = event();
    await ingest(fixture.deps(pool), known);
    for (let i = 0; i < 5; i++) {
      expect(await ingest(fixture.deps(pool), known)).toBe('duplicate');
      const fresh = event();
      expect(await ingest(fixture.deps(pool), fresh)).toBe('accepted');
      expect(await fixture.stored(fresh)).toEqual({ events: 1, jobs: 1 });
    }
    // Outside a transaction, a statement's transaction starts with it; inside a leftover one it would not.
    const { rows } = await pool.query(
      'select now() = statement_timestamp() as fresh, txid_current_if_assigned() as xid',
    );
    expect(rows[0]).toEqual({ fresh: true, xid: null });
  });

  it('concurrent calls for one key: exactly one accepted', async () => {
    const wide = new pg.Pool({ connectionString: fixture.url, max: 8, pipeline });
    try {
      const e = event();
      const outcomes = await Promise.all(Array.from({ length: 24 }, () => ingest(fixture.deps(wide), e)));
      expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(1);
      expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
    } finally {
      await wide.end();
    }
  });

  const deep = (depth: number) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  // Random hex: an index cannot compress it below its row limit.
  const hex = (n: number) =>
    randomBytes(Math.ceil(n / 2))
      .toString('hex')
      .slice(0, n);
  it.each([
    ['a \\u0000 escape', { payloadText: '{"a":"\\u0000"}' }],
    ['a lone surrogate escape', { payloadText: '{"a":"\\ud800"}' }],
    ['a NUL in the type', { type: 'invoice.\u0000paid' }],
    ['nesting 100,000 levels deep', { payloadText: deep(100_000) }],
    ['a 900 KB event key', { eventId: `evt_${hex(900_000)}` }],
    ['a number past numeric', { payloadText: '{"a":1e1000000}' }],
  ])(
    'what Postgres can never store (%s): InvalidPayloadError, nothing recorded, connection still usable',
    async (_what, overrides) => {
      const e = event(overrides);
      await expect(ingest(fixture.deps(pool), e)).rejects.toBeInstanceOf(InvalidPayloadError);
      expect(await fixture.stored(e)).toEqual({ events: 0, jobs: 0 });
      expect(await ingest(fixture.deps(pool), event())).toBe('accepted');
    },
  );

  it('the job insert failing rolls the event back: UnavailableError, nothing recorded', async () => {
    const failing = event({ provider: `fail-${pipeline}` });
    await fixture.admin
      .query(`create or replace function public.ingest_test_fail() returns trigger language plpgsql as $$
      begin raise exception 'refused'; end $$`);
    await fixture.admin
      .query(`create trigger ingest_test_fail_${pipeline} before insert on pgboss.job for each row
      when (new.data->>'provider' = 'fail-${pipeline}') execute function public.ingest_test_fail()`);
    try {
      await expect(ingest(fixture.deps(pool), failing)).rejects.toBeInstanceOf(UnavailableError);
      expect(await fixture.stored(failing)).toEqual({ events: 0, jobs: 0 });
    } finally {
      await fixture.admin.query(`drop trigger ingest_test_fail_${pipeline} on pgboss.job`);
    }
    expect(await ingest(fixture.deps(pool), failing)).toBe('accepted');
    expect(await fixture.stored(failing)).toEqual({ events: 1, jobs: 1 });
  });

  it('an unreachable database: UnavailableError', async () => {
    const dead = new pg.Pool({ connectionString: 'postgres://x:y@127.0.0.1:1/none', pipeline });
    try {
      await expect(ingest(fixture.deps(dead), event())).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await dead.end();
    }
  });
});

describe('payload storage', () => {
  it('keeps payloads apart from the event rows, so a status change never copies a payload', async () => {
    const pool = new pg.Pool({ connectionString: fixture.url, max: 1 });
    // Bytes of the event table (heap and TOAST) and of the payload partitions (everything: heap, TOAST, indexes).
    const sizes = async () => {
      const { rows } = await fixture.admin.query<{ heap: string; toast: string; payloads: string }>(
        `select pg_relation_size(oid)::text as heap, pg_relation_size(reltoastrelid)::text as toast,
                (select sum(pg_total_relation_size(relid))::text
                   from pg_partition_tree('webhook_event_payloads')) as payloads
           from pg_class where oid = 'webhook_events'::regclass`,
      );
      return {
        heap: Number(rows[0]?.heap),
        toast: Number(rows[0]?.toast),
        payloads: Number(rows[0]?.payloads),
      };
    };
    try {
      // Stripe-like payloads of about 3 kB: repetitive JSON with random ids, which compresses to about 800 bytes.
      const payload = (i: number) =>
        JSON.stringify({
          id: `evt_${i}`,
          object: 'event',
          data: {
            object: {
              lines: Array.from({ length: 20 }, (_, n) => ({
                id: `il_${randomBytes(8).toString('hex')}`,
                object: 'line_item',
                amount: 1_000 * n,
                currency: 'usd',
                description: 'Pro plan (monthly)',
              })),
            },
          },
        });
      const events = Array.from({ length: 40 }, (_, i) => event({ payloadText: payload(i) }));
      const ids = events.map((e) => e.eventId);
      const start = await sizes();
      for (const e of events) await ingest(fixture.deps(pool), e);
      const recorded = await sizes();
      expect(recorded.payloads - start.payloads).toBeGreaterThanOrEqual(40 * 500);
      expect(recorded.toast).toBe(start.toast);

      // Two status changes of every row: 80 new row versions of narrow rows. Were the payload in the row, each would
      // copy it (about 64 kB of heap compressed inline) or a TOAST pointer to it.
      for (const status of ['processing', 'processed']) {
        await fixture.admin.query('update webhook_events set status = $2 where event_id = any($1)', [
          ids,
          status,
        ]);
      }
      const updated = await sizes();
      expect(updated.payloads).toBe(recorded.payloads);
      expect(updated.toast).toBe(recorded.toast);
      expect(updated.heap - recorded.heap).toBeLessThanOrEqual(32 * 1024);
    } finally {
      await pool.end();
    }
  });
});
