import { randomBytes } from 'node:crypto';
import { waitFor } from '@webhook-inbox/testing';
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest.ts';
import type { VerifiedEvent } from '@webhook-inbox/providers';
import { createPurgeHandler, PURGE_QUEUE, schedulePurge } from '../../src/ops/purge-schedule.ts';
import { countDayPayloads } from '../../src/ops/retention-batches.ts';
import { MIN_KEY_DAYS, MIN_PAYLOAD_DAYS, RetentionOptionError } from '../../src/ops/retention-options.ts';
import { purgeExpired } from '../../src/ops/retention.ts';
import { openDeps, useOpsDeps } from '../support/ops.ts';
import { partitionName } from '../../src/sql/event-payloads.ts';
import { ensurePayloadPartitions, listPayloadPartitions } from '../../src/ops/partitions.ts';

const ops = useOpsDeps();
beforeEach(async () => {
  await ops.deps.pool.query('truncate webhook_events, webhook_event_payloads cascade');
});

interface Seed {
  id: string;
  status: string;
  ageDays: number;
  effect?: boolean;
}

async function seed(rows: Seed[]): Promise<void> {
  const oldest = Math.max(...rows.map((row) => row.ageDays));
  await ensurePayloadPartitions(ops.deps.pool, {
    from: new Date(Date.now() - oldest * 86_400_000 - 3_600_000),
  });
  for (const row of rows) {
    await ops.deps.pool.query(
      `with event as (
         insert into webhook_events (provider, event_id, type, status, received_at)
         values ('stripe', $1, 'checkout.session.completed', $2, now() - $3 * interval '1 day')
         returning provider, event_id, received_at)
       insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select provider, event_id, received_at, '{"id": "x", "email": "a@b.c"}' from event`,
      [row.id, row.status, row.ageDays],
    );
    if (row.effect) {
      await ops.deps.pool.query(
        `insert into effect_runs (provider, event_id, effect, status, idempotency_key)
         values ('stripe', $1, 'provision-account', 'completed', $1 || ':provision-account')`,
        [row.id],
      );
    }
  }
}

async function state(): Promise<Record<string, 'payload' | 'purged'>> {
  const { rows } = await ops.deps.pool.query<{ event_id: string; has_payload: boolean }>(
    `select event_id,
            exists (select from webhook_event_payloads p
                     where p.provider = e.provider and p.event_id = e.event_id and p.received_at = e.received_at)
              as has_payload
       from webhook_events e order by event_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.event_id, r.has_payload ? 'payload' : 'purged']));
}

describe('purgeExpired', () => {
  it("deletes the overview's per-minute history older than historyDays, in batches, and counts it in a dry run", async () => {
    await ops.deps.pool.query('truncate webhook_delivery_counts, inbox_samples');
    await ops.deps.pool.query(
      `insert into webhook_delivery_counts (minute, provider, outcome, http_status, count)
       select date_trunc('minute', now()) - d * interval '1 day', p, 'accepted', 200, 1
         from unnest(array[3, 6, 10]) as d, unnest(array['stripe', 'shopify']) as p`,
    );
    await ops.deps.pool.query(
      `insert into inbox_samples (minute, events_received, events_processing, events_failed, events_dead,
                                  oldest_unprocessed_seconds, jobs_created, jobs_retry, jobs_active)
       select date_trunc('minute', now()) - d * interval '1 day', 0, 0, 0, 0, 0, 0, 0, 0
         from unnest(array[3, 6, 10]) as d`,
    );
    const ages = async () =>
      (
        await ops.deps.pool.query<{ days: number }>(
          `select round(extract(epoch from now() - minute) / 86400)::int as days from webhook_delivery_counts
           union all
           select round(extract(epoch from now() - minute) / 86400)::int from inbox_samples order by 1`,
        )
      ).rows.map((r) => r.days);

    const dry = await purgeExpired(ops.deps.pool, { historyDays: 5, dryRun: true });
    expect(dry.historyRowsDeleted).toBe(6);
    expect(await ages()).toEqual([3, 3, 3, 6, 6, 6, 10, 10, 10]);

    const result = await purgeExpired(ops.deps.pool, { historyDays: 5, batchSize: 1 });
    expect(result).toMatchObject({ historyRowsDeleted: 6, complete: true });
    expect(await ages()).toEqual([3, 3, 3]);
  });

  it('deletes audit rows older than auditDays through audit_log_purge, and refuses fewer than 90 days', async () => {
    await ops.deps.pool.query(
      `insert into audit_log (at, actor, action, target, details)
       select now() - d * interval '1 day', 'test', 'retention_test', d::text, '{}'
         from unnest(array[100, 400]) as d`,
    );
    const kept = async () =>
      (
        await ops.deps.pool.query<{ target: string }>(
          `select target from audit_log where action = 'retention_test' order by target`,
        )
      ).rows.map((r) => r.target);

    const dry = await purgeExpired(ops.deps.pool, { auditDays: 365, dryRun: true });
    expect(dry.auditRowsDeleted).toBe(1);
    expect(await kept()).toEqual(['100', '400']);

    const result = await purgeExpired(ops.deps.pool, { auditDays: 365 });
    expect(result.auditRowsDeleted).toBe(1);
    expect(await kept()).toEqual(['100']);
    await expect(purgeExpired(ops.deps.pool, { auditDays: 30 })).rejects.toMatchObject({
      code: 'invalid_option',
    });
  });

  it('purges payloads and deletes keys of finished events past the cutoffs; never in-flight or newer ones', async () => {
    await seed([
      { id: 'processed-40d', status: 'processed', ageDays: 40 },
      { id: 'dead-40d', status: 'dead', ageDays: 40 },
      { id: 'received-40d', status: 'received', ageDays: 40 },
      { id: 'processing-40d', status: 'processing', ageDays: 40 },
      { id: 'failed-40d', status: 'failed', ageDays: 40 },
      { id: 'processed-29d', status: 'processed', ageDays: 29 },
      { id: 'processed-100d', status: 'processed', ageDays: 100, effect: true },
      { id: 'dead-100d', status: 'dead', ageDays: 100 },
      { id: 'failed-100d', status: 'failed', ageDays: 100 },
      { id: 'received-100d', status: 'received', ageDays: 100 },
      { id: 'processed-89d', status: 'processed', ageDays: 89, effect: true },
    ]);

    const result = await purgeExpired(ops.deps.pool, { payloadDays: 30, keyDays: 90, batchSize: 2 });
    // The day 89 days ago is dropped whole (and the empty days seeding created). The days 40 and 100 days ago hold
    // events in flight: they stay, and lose the payloads of their finished events (at 100 days, those of the two
    // events whose keys went first).
    expect(result).toMatchObject({
      payloadsPurged: 5,
      payloadPartitionsKept: 2,
      keysDeleted: 2,
      timeouts: 0,
      complete: true,
    });
    expect(await state()).toEqual({
      'dead-40d': 'purged',
      'failed-100d': 'payload',
      'failed-40d': 'payload',
      'processed-29d': 'payload',
      'processed-40d': 'purged',
      'processed-89d': 'purged',
      'processing-40d': 'payload',
      'received-100d': 'payload',
      'received-40d': 'payload',
    });
    // The deleted key took its effect ledger with it; the kept one still has its own.
    const ledger = await ops.deps.pool.query('select event_id from effect_runs');
    expect(ledger.rows).toEqual([{ event_id: 'processed-89d' }]);
    const day = (ageDays: number) => partitionName(new Date(Date.now() - ageDays * 86_400_000));
    const names = (await listPayloadPartitions(ops.deps.pool)).map((partition) => partition.name);
    expect(names).not.toContain(day(89));
    expect(names).toEqual(expect.arrayContaining([day(100), day(40), day(29)]));
    // The phases account for the whole run (each rounded to a millisecond).
    const phases = Object.values(result.phaseMs);
    expect(Object.keys(result.phaseMs).sort()).toEqual([
      'audit',
      'history',
      'keys',
      'partitions',
      'payloads',
    ]);
    expect(phases.every((ms) => Number.isInteger(ms) && ms >= 0)).toBe(true);
    expect(Math.abs(phases.reduce((a, b) => a + b, 0) - result.durationMs)).toBeLessThanOrEqual(3);

    // Idempotent.
    expect(await purgeExpired(ops.deps.pool)).toMatchObject({
      payloadsPurged: 0,
      keysDeleted: 0,
      complete: true,
    });
  });

  it(`refuses keyDays under ${MIN_KEY_DAYS} (and other nonsense) before touching anything`, async () => {
    await seed([{ id: 'processed-100d', status: 'processed', ageDays: 100 }]);
    await expect(purgeExpired(ops.deps.pool, { keyDays: 6 })).rejects.toThrow(
      /keyDays must be at least 7.*Stripe/s,
    );
    await expect(purgeExpired(ops.deps.pool, { keyDays: Number.NaN })).rejects.toThrow(RangeError);
    await expect(purgeExpired(ops.deps.pool, { payloadDays: 0 })).rejects.toThrow(/payloadDays/);
    await expect(purgeExpired(ops.deps.pool, { batchSize: 0 })).rejects.toThrow(/batchSize/);
    await expect(purgeExpired(ops.deps.pool, { maxBatchMs: 1 })).rejects.toThrow(/maxBatchMs/);
    expect(await state()).toEqual({ 'processed-100d': 'payload' });
    expect(await purgeExpired(ops.deps.pool, { keyDays: 7 })).toMatchObject({ keysDeleted: 1 });
  });

  it(`refuses payloadDays under ${MIN_PAYLOAD_DAYS} (the retry window) unless forced, before touching anything`, async () => {
    await seed([
      { id: 'dead-2d', status: 'dead', ageDays: 2, effect: true },
      { id: 'processed-2.5d', status: 'processed', ageDays: 2.5 },
    ]);
    const refused = await purgeExpired(ops.deps.pool, { payloadDays: 1 / 86_400_000 }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(RetentionOptionError);
    expect(refused).toMatchObject({ code: 'below_retry_window' });
    expect((refused as Error).message).toMatch(/retry window/);
    await expect(purgeExpired(ops.deps.pool, { payloadDays: 2.9 })).rejects.toThrow(RetentionOptionError);
    expect(await state()).toEqual({ 'dead-2d': 'payload', 'processed-2.5d': 'payload' });
    // keyDays has no override.
    await expect(purgeExpired(ops.deps.pool, { keyDays: 6, force: true })).rejects.toMatchObject({
      code: 'invalid_option',
    });

    // Days end at UTC midnight: a day at least 2 days back has ended a day ago at the latest.
    expect(await purgeExpired(ops.deps.pool, { payloadDays: 1, force: true })).toMatchObject({
      payloadsPurged: 2,
    });
    expect(await state()).toEqual({ 'dead-2d': 'purged', 'processed-2.5d': 'purged' });
  });

  it('dry run: counts per table what the purge then does, and changes nothing', async () => {
    await seed([
      { id: 'processed-100d', status: 'processed', ageDays: 100, effect: true },
      { id: 'dead-95d', status: 'dead', ageDays: 95, effect: true },
      { id: 'failed-100d', status: 'failed', ageDays: 100, effect: true },
      { id: 'processed-40d', status: 'processed', ageDays: 40, effect: true },
      { id: 'processed-10d', status: 'processed', ageDays: 10 },
    ]);
    const before = await state();
    const ledger = async () =>
      (await ops.deps.pool.query<{ event_id: string }>('select event_id from effect_runs order by 1')).rows;
    const ledgerBefore = await ledger();

    const dry = await purgeExpired(ops.deps.pool, { payloadDays: 30, keyDays: 90, dryRun: true });
    expect(dry).toMatchObject({
      dryRun: true,
      keysDeleted: 2,
      effectRunsDeleted: 2,
      // processed-100d's, dead-95d's and processed-40d's; not failed-100d's (in flight).
      payloadsPurged: 3,
      batches: 0,
      complete: true,
    });
    expect(await state()).toEqual(before);
    expect(await ledger()).toEqual(ledgerBefore);

    const done = await purgeExpired(ops.deps.pool, { payloadDays: 30, keyDays: 90, batchSize: 1 });
    expect(done).toMatchObject({ dryRun: false, keysDeleted: 2, effectRunsDeleted: 2, payloadsPurged: 3 });
    expect(await ledger()).toEqual([{ event_id: 'failed-100d' }, { event_id: 'processed-40d' }]);
  });

  it('skips keys another transaction holds, without waiting, and gives up on a held ledger row after 5 short waits at one row', async () => {
    await seed([
      { id: 'a-held', status: 'processed', ageDays: 100 },
      { id: 'b-free', status: 'processed', ageDays: 99 },
      { id: 'c-ledger-held', status: 'processed', ageDays: 40, effect: true },
    ]);
    const worker = await ops.deps.pool.connect();
    try {
      await worker.query('begin');
      await worker.query(`select 1 from webhook_events where event_id = 'a-held' for update`);
      // Its key stays; its day's payloads go (a day of finished events is dropped whole, whoever reads a key).
      // A batch that waited on the held key would run into maxBatchMs, set far above any batch's running time
      // on a busy machine: a timeout here means a wait, not a slow batch.
      const first = await purgeExpired(ops.deps.pool, { batchSize: 10, maxBatchMs: 30_000 });
      expect(first).toMatchObject({ keysDeleted: 1, payloadsPurged: 3, timeouts: 0, complete: true });
      expect(await state()).toEqual({ 'a-held': 'purged', 'c-ledger-held': 'purged' });
      await worker.query('commit');

      // Deleting a key cascades to its ledger: a ledger row held by a replay in progress makes the batch wait,
      // at most maxBatchMs (50 ms) per try. The held one is the oldest, so every (smaller) retry includes it:
      // 10, 5 and 2 rows, then one row five times.
      await ops.deps.pool.query(
        `update webhook_events set received_at = now() - interval '100 days'
           - case when event_id = 'c-ledger-held' then interval '1 day' else interval '0' end`,
      );
      await worker.query('begin');
      await worker.query(`select 1 from effect_runs where event_id = 'c-ledger-held' for update`);
      const second = await purgeExpired(ops.deps.pool, { batchSize: 10 });
      expect(second).toMatchObject({ keysDeleted: 0, payloadsPurged: 0, timeouts: 8, complete: false });
      await worker.query('commit');
      expect(await purgeExpired(ops.deps.pool, { maxBatchMs: 30_000 })).toMatchObject({
        keysDeleted: 2,
        complete: true,
      });
    } finally {
      await worker.query('rollback').catch(() => {});
      worker.release();
    }
  });

  it('stops between batches when aborted', async () => {
    await seed([{ id: 'processed-100d', status: 'processed', ageDays: 100 }]);
    const result = await purgeExpired(ops.deps.pool, { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ keysDeleted: 0, complete: false });
  });

  it('retention purge under concurrent ingest: every ingest succeeds, none waits a second on the purge', async () => {
    // 50 000 finished events: half past the key cutoff, half past the payload cutoff, one second apart.
    const OLD = 25_000;
    await ensurePayloadPartitions(ops.deps.pool, { from: new Date(Date.now() - 101 * 86_400_000) });
    await ops.deps.pool.query(
      `insert into webhook_events (provider, event_id, type, status, received_at, processed_at)
       select 'stripe', 'evt_key_' || g, 'checkout.session.completed',
              'processed', now() - interval '100 days' - g * interval '1 second', now() - interval '100 days'
       from generate_series(1, $1::int) g`,
      [OLD],
    );
    await ops.deps.pool.query(
      `insert into webhook_events (provider, event_id, type, status, received_at, processed_at)
       select 'stripe', 'evt_pay_' || g, 'checkout.session.completed',
              'dead', now() - interval '40 days' - g * interval '1 second', null
       from generate_series(1, $1::int) g`,
      [OLD],
    );
    await ops.deps.pool.query(
      `insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select provider, event_id, received_at,
              jsonb_build_object('id', event_id, 'object', 'event', 'data', repeat('x', 300))
         from webhook_events`,
    );
    await ops.deps.pool.query('analyze webhook_events, webhook_event_payloads');

    // The receiver's side. lock_timeout makes Postgres itself fail any ingest that waits on a lock the purge
    // holds for longer than a second, so an error here is exactly a purge blocking the receiver. The purge's
    // maxBatchMs cancels any batch that runs long, so its locks are held for a batch's time plus the scheduling
    // of a busy machine, far below the bound; it is 200 ms here rather than the default 50 so that a busy machine
    // cannot make one row's batch run long five times over and the purge give up. How much the purge slows the
    // receiver is a figure, not an assertion: `pnpm bench -- --soak` measures it against slices with no purge.
    const receiver = await openDeps(ops.db.url, {
      max: 6,
      lock_timeout: 1000,
      application_name: 'ingest-under-test',
    });
    const recent = Array.from({ length: 50 }, (_, i) => `evt_recent_${i}`);
    const event = (eventId: string): VerifiedEvent => ({
      provider: 'stripe',
      eventId,
      type: 'checkout.session.completed',
      payloadText: JSON.stringify({ id: eventId, object: 'event' }),
      headers: {},
    });
    for (const id of recent) await ingest(receiver, event(id));

    const latencies: number[] = [];
    const failures: unknown[] = [];
    const kinds = { new: 0, duplicate: 0, beingPurged: 0 };
    const maxByKind = { new: 0, duplicate: 0, beingPurged: 0 };
    let stop = false;
    let counter = 0;
    const loop = async (worker: number) => {
      while (!stop) {
        const n = counter++;
        let id: string;
        const kind = (['new', 'duplicate', 'beingPurged'] as const)[n % 3] ?? 'new';
        kinds[kind]++;
        if (kind === 'new') {
          id = `evt_new_${worker}_${n}_${randomBytes(3).toString('hex')}`;
        } else if (kind === 'duplicate') {
          id = recent[n % recent.length] ?? 'evt_recent_0';
        } else {
          // Keys the purge is deleting or updating right now (or has just, or is about to).
          const i = 1 + Math.floor(Math.random() * OLD);
          id = n % 2 === 0 ? `evt_key_${i}` : `evt_pay_${i}`;
        }
        const started = performance.now();
        try {
          await ingest(receiver, event(id));
        } catch (error) {
          failures.push(error);
        }
        const latency = performance.now() - started;
        latencies.push(latency);
        maxByKind[kind] = Math.max(maxByKind[kind], latency);
      }
    };

    try {
      const loops = Array.from({ length: 4 }, (_, w) => loop(w));
      await waitFor(() => latencies.length >= 20, { timeout: 10_000, message: 'ingest loops running' });
      const before = latencies.length;
      const purge = await purgeExpired(ops.deps.pool, { payloadDays: 30, keyDays: 90, maxBatchMs: 200 });
      const during = latencies.length - before;
      stop = true;
      await Promise.all(loops);

      const sorted = [...latencies].sort((a, b) => a - b);
      const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      console.info(
        `purge: ${purge.keysDeleted} keys deleted + ${purge.payloadsPurged} payloads dropped ` +
          `(${purge.payloadPartitionsDropped} days) in ${purge.batches} ` +
          `batches (${purge.timeouts} cancelled, final size ${purge.finalBatchSize}), ${purge.durationMs} ms ` +
          `(slowest batch ${purge.slowestBatchMs} ms); ${during} ingests during it (${JSON.stringify(kinds)} in all); ` +
          `ingest latency p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, max ${p(1).toFixed(1)} ms ` +
          `(max by kind ${JSON.stringify(maxByKind, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))})`,
      );

      expect(
        failures.map((e) => (e as Error & { cause?: { code?: string } }).cause?.code ?? String(e)),
      ).toEqual([]);
      // Old keys re-ingested after their deletion are new rows (received now), so nothing old is left: the payloads
      // of both halves go with their days.
      expect(purge).toMatchObject({ keysDeleted: OLD, payloadsPurged: 2 * OLD, complete: true });
      expect(during).toBeGreaterThanOrEqual(20);
      expect(kinds.beingPurged).toBeGreaterThan(0);
    } finally {
      stop = true;
      await receiver.close();
    }
  });
});

describe('countDayPayloads', () => {
  it('counts a day exactly, slice by slice along its key, to the microsecond', async () => {
    const day = new Date((Math.floor(Date.now() / 86_400_000) - 20) * 86_400_000);
    await ensurePayloadPartitions(ops.deps.pool, { from: day });
    const partition = partitionName(day);
    const count = async () => {
      const client = await ops.deps.pool.connect();
      try {
        return await countDayPayloads(client, partition);
      } finally {
        client.release();
      }
    };
    expect(await count()).toBe(0);
    // Two slices and a part of one (a slice is 20 000 keys); each event id twice, a microsecond apart: a key
    // read back as a JavaScript Date (milliseconds) would skip or count some twice.
    await ops.deps.pool.query(
      `insert into webhook_event_payloads (provider, event_id, received_at, payload)
       select provider, 'evt_' || (i / 2), $1::timestamptz + (i % 2) * interval '1 microsecond'
                                          + (i / 2) * interval '1 millisecond', '{}'
         from generate_series(0, 45000) as i, unnest(array['shopify', 'stripe']) as provider`,
      [day],
    );
    expect(await count()).toBe(90_002);
    await ops.deps.pool.query(
      `delete from "${partition}" where provider = 'shopify' and event_id >= 'evt_2'`,
    );
    const { rows } = await ops.deps.pool.query<{ n: number }>(
      `select count(*)::int as n from "${partition}"`,
    );
    expect(await count()).toBe(rows[0]!.n);
  });
});

describe('schedulePurge', () => {
  it('creates the queue and one daily schedule (idempotent); refuses bad settings up front', async () => {
    await schedulePurge(ops.deps.boss, { cron: '17 3 * * *', payloadDays: 30, keyDays: 90 });
    await schedulePurge(ops.deps.boss, { cron: '17 3 * * *', payloadDays: 30, keyDays: 90 });
    await expect(schedulePurge(ops.deps.boss, { keyDays: 3 })).rejects.toThrow(/keyDays must be at least 7/);
    const schedules = await ops.deps.boss.getSchedules(PURGE_QUEUE);
    expect(schedules).toHaveLength(1);
    expect(schedules[0]).toMatchObject({
      name: PURGE_QUEUE,
      cron: '17 3 * * *',
      timezone: 'UTC',
      data: { payloadDays: 30, keyDays: 90 },
    });
    await ops.deps.boss.unschedule(PURGE_QUEUE);
  });

  it('its handler, registered with boss.work, runs the purge a job asks for', async () => {
    await schedulePurge(ops.deps.boss);
    await seed([
      { id: 'processed-100d', status: 'processed', ageDays: 100 },
      { id: 'processed-10d', status: 'processed', ageDays: 10 },
    ]);
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    await ops.deps.boss.work(
      PURGE_QUEUE,
      { pollingIntervalSeconds: 0.5 },
      createPurgeHandler(ops.deps.pool, { logger }),
    );
    try {
      await ops.deps.boss.send(PURGE_QUEUE, { payloadDays: 7, keyDays: 90 });
      await waitFor(async () => JSON.stringify(await state()) === '{"processed-10d":"purged"}', {
        timeout: 15_000,
        message: 'the purge job to run',
      });
      await waitFor(() => lines.length === 1, { timeout: 5_000 });
      expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
        msg: 'retention purge',
        keysDeleted: 1,
        payloadsPurged: 2,
      });
      // The scheduled job is in the audit log as itself, with what it removed.
      const audited = await ops.deps.pool.query(
        `select actor, role, auth_method, target, (details->>'keysDeleted')::int as keys
           from audit_log where action = 'purge'`,
      );
      expect(audited.rows).toEqual([
        { actor: 'system:retention', role: 'admin', auth_method: 'system', target: 'retention', keys: 1 },
      ]);
    } finally {
      await ops.deps.boss.offWork(PURGE_QUEUE);
      await ops.deps.boss.unschedule(PURGE_QUEUE);
    }
  });
});
