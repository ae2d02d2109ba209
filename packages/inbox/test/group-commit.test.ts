import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { event, useRecordingDatabase } from './support/recording.ts';
import { InvalidPayloadError, UnavailableError } from '../src/errors.ts';
import { createGroupCommit, type BatchReport } from '../src/group-commit.ts';
import type { IngestOutcome } from '../src/ingest.ts';

// Group commit against real Postgres. Calls made in the same turn of the event loop are one batch (the first
// transaction starts on the next turn), so what shares a transaction here is known, not hoped for.

const fixture = useRecordingDatabase();

/** Each promise's outcome, or which typed error it rejected with. */
const outcomes = (calls: Array<Promise<IngestOutcome>>) =>
  Promise.all(
    calls.map((call) =>
      call.catch((error: unknown) =>
        error instanceof InvalidPayloadError
          ? 'InvalidPayloadError'
          : error instanceof UnavailableError
            ? 'UnavailableError'
            : String(error),
      ),
    ),
  );

describe.each([
  ['plain pool', false],
  ['pipelined pool', true],
])('group commit on a %s', (_name, pipeline) => {
  let pool: pg.Pool;
  let reports: BatchReport[];
  let recorder: ReturnType<typeof createGroupCommit>;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: fixture.url, max: 2, pipeline });
    recorder = createGroupCommit(fixture.deps(pool), {
      maxTransactions: 1,
      maxBatch: 64,
      onBatch: (report) => reports.push(report),
    });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('events sent together share one transaction; each gets its own answer', async () => {
    reports = [];
    const recordedBefore = event();
    expect(await recorder.record(recordedBefore)).toBe('accepted');
    reports = [];
    const fresh = [event(), event(), event()];
    const answers = await outcomes([...fresh, recordedBefore].map((e) => recorder.record(e)));
    expect(answers).toEqual(['accepted', 'accepted', 'accepted', 'duplicate']);
    expect(reports).toEqual([{ requests: 4, events: 4, outcome: 'committed' }]);
    for (const e of fresh) expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
    expect(await fixture.stored(recordedBefore)).toEqual({ events: 1, jobs: 1 });
  });

  it('the same key several times in one batch: one accepted, the rest duplicate, one row, one job', async () => {
    reports = [];
    const e = event();
    const other = event();
    const answers = await outcomes([e, e, other, e, e].map((x) => recorder.record(x)));
    expect(answers).toEqual(['accepted', 'duplicate', 'accepted', 'duplicate', 'duplicate']);
    expect(reports).toEqual([{ requests: 5, events: 2, outcome: 'committed' }]);
    expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
  });

  it.each([
    ['a \\u0000 escape', { payloadText: '{"a":"\\u0000"}' }],
    ['a NUL in the type', { type: 'invoice.\u0000paid' }],
  ])(
    'a payload PostgreSQL refuses (%s) inside a batch: its own 400, its neighbours recorded',
    async (_what, bad) => {
      reports = [];
      const poison = event(bad);
      const neighbours = Array.from({ length: 6 }, () => event());
      const batch = [...neighbours.slice(0, 3), poison, poison, ...neighbours.slice(3)];
      const answers = await outcomes(batch.map((e) => recorder.record(e)));
      expect(answers).toEqual([
        'accepted',
        'accepted',
        'accepted',
        'InvalidPayloadError',
        'InvalidPayloadError',
        'accepted',
        'accepted',
        'accepted',
      ]);
      expect(reports[0]).toEqual({ requests: 8, events: 7, outcome: 'split' });
      expect(reports.filter((r) => r.outcome === 'committed').reduce((n, r) => n + r.events, 0)).toBe(6);
      for (const e of neighbours) expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
      expect(await fixture.stored(poison)).toEqual({ events: 0, jobs: 0 });
    },
  );

  it('a failing transaction answers UnavailableError to its own events only, nothing of it recorded', async () => {
    const provider = `fail-gc-${pipeline}`;
    await fixture.admin.query(`create or replace function public.group_commit_test_fail() returns trigger
      language plpgsql as $$ begin raise exception 'refused'; end $$`);
    await fixture.admin
      .query(`create trigger group_commit_test_fail_${pipeline} before insert on pgboss.job for each row
      when (new.data->>'provider' = '${provider}') execute function public.group_commit_test_fail()`);
    const failing = [event(), event({ provider }), event()];
    try {
      reports = [];
      const answers = await outcomes(failing.map((e) => recorder.record(e)));
      expect(answers).toEqual(['UnavailableError', 'UnavailableError', 'UnavailableError']);
      expect(reports).toEqual([{ requests: 3, events: 3, outcome: 'failed' }]);
      for (const e of failing) expect(await fixture.stored(e)).toEqual({ events: 0, jobs: 0 });
    } finally {
      await fixture.admin.query(`drop trigger group_commit_test_fail_${pipeline} on pgboss.job`);
    }
    // The next batch, on the same pool, is unaffected.
    const next = event();
    expect(await recorder.record(next)).toBe('accepted');
    expect(await fixture.stored(next)).toEqual({ events: 1, jobs: 1 });
  });

  it('an unreachable database: UnavailableError', async () => {
    const dead = new pg.Pool({ connectionString: 'postgres://x:y@127.0.0.1:1/none', pipeline });
    try {
      const unreachable = createGroupCommit(fixture.deps(dead), { maxTransactions: 1, maxBatch: 8 });
      await expect(unreachable.record(event())).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await dead.end();
    }
  });
});

describe('concurrent batches sharing keys', () => {
  it('two recorders inserting the same keys in opposite orders: no deadlock, each key accepted once', async () => {
    const pools = [0, 1].map(() => new pg.Pool({ connectionString: fixture.url, max: 4, pipeline: true }));
    try {
      const reports: BatchReport[] = [];
      const recorders = pools.map((pool) =>
        createGroupCommit(fixture.deps(pool), {
          maxTransactions: 4,
          maxBatch: 16,
          onBatch: (report) => reports.push(report),
        }),
      );
      for (let round = 0; round < 5; round++) {
        const events = Array.from({ length: 64 }, () => event());
        const answers = await outcomes([
          ...events.map((e) => recorders[0]!.record(e)),
          ...events.toReversed().map((e) => recorders[1]!.record(e)),
        ]);
        expect(answers.filter((a) => a !== 'accepted' && a !== 'duplicate')).toEqual([]);
        expect(answers.filter((a) => a === 'accepted')).toHaveLength(64);
        for (const e of events.slice(0, 4)) expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
      }
      // Several batches of several events each were open at once in each recorder.
      expect(reports.filter((r) => r.events > 1).length).toBeGreaterThan(8);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});

describe('recordAll: the events of one request, one transaction', () => {
  let pool: pg.Pool;
  let reports: BatchReport[];
  let recorder: ReturnType<typeof createGroupCommit>;
  beforeAll(() => {
    reports = [];
    pool = new pg.Pool({ connectionString: fixture.url, max: 2, pipeline: true });
    recorder = createGroupCommit(fixture.deps(pool), {
      maxTransactions: 1,
      maxBatch: 8,
      onBatch: (report) => reports.push(report),
    });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('records only the new events, in one transaction past maxBatch, answers in order; redelivery all duplicate', async () => {
    const known = [event(), event()];
    for (const e of known) expect(await recorder.record(e)).toBe('accepted');
    reports = [];
    const fresh = Array.from({ length: 20 }, () => event());
    const batch = [fresh[0]!, known[0]!, ...fresh.slice(1), known[1]!, fresh[0]!];
    const answers = await recorder.recordAll(batch);
    expect(answers).toEqual([
      'accepted',
      'duplicate',
      ...fresh.slice(1).map(() => 'accepted'),
      'duplicate',
      'duplicate',
    ]);
    expect(reports).toEqual([{ requests: 23, events: 22, outcome: 'committed' }]);
    for (const e of [...fresh, ...known]) expect(await fixture.stored(e)).toEqual({ events: 1, jobs: 1 });
    // One transaction: every new row carries the same transaction id.
    const xids = await fixture.admin.query(
      `select count(distinct xmin::text)::int as n from webhook_events where provider = 'stripe' and event_id = any($1)`,
      [fresh.map((e) => e.eventId)],
    );
    expect((xids.rows[0] as { n: number }).n).toBe(1);
    expect(new Set(await recorder.recordAll(batch))).toEqual(new Set(['duplicate']));
  });

  it('a payload PostgreSQL refuses: the whole request refused, nothing of it recorded', async () => {
    reports = [];
    const good = [event(), event()];
    await expect(
      recorder.recordAll([good[0]!, event({ payloadText: '{"a":"\\u0000"}' }), good[1]!]),
    ).rejects.toBeInstanceOf(InvalidPayloadError);
    expect(reports).toEqual([{ requests: 3, events: 3, outcome: 'refused' }]);
    for (const e of good) expect(await fixture.stored(e)).toEqual({ events: 0, jobs: 0 });
  });

  it('runs beside record(): both answered, nothing lost', async () => {
    const singles = Array.from({ length: 5 }, () => event());
    const batch = Array.from({ length: 5 }, () => event());
    const [all, ...one] = await Promise.all([
      recorder.recordAll(batch),
      ...singles.map((e) => recorder.record(e)),
    ]);
    expect(all).toEqual(batch.map(() => 'accepted'));
    expect(one).toEqual(singles.map(() => 'accepted'));
    expect(await recorder.recordAll([])).toEqual([]);
  });
});
