import { randomUUID } from 'node:crypto';
import { insertEvents, waitFor } from '@webhook-inbox/testing';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '@webhook-inbox/inbox/errors';
import { ingest } from '@webhook-inbox/inbox/ingest';
import { silentLogger, useOpsDeps } from './support/ops.ts';
import {
  ensurePayloadPartitions,
  keepPayloadPartitionsAhead,
  listPayloadPartitions,
  PARTITION_DAYS_AHEAD,
} from '@webhook-inbox/inbox/partitions';
import { purgeExpired } from '../src/retention.ts';
import { eventPayloads } from '@webhook-inbox/inbox/sql';

const { partitionDay, partitionName } = eventPayloads;
const DAY_MS = 86_400_000;
const ops = useOpsDeps();

const nameOf = (time: number) => partitionName(new Date(time));

/** Detaches and drops the partitions of today and the days ahead: a database whose partitions ran out. */
async function dropDaysAhead(): Promise<void> {
  for (const partition of await listPayloadPartitions(ops.deps.pool)) {
    if (partition.day.getTime() + DAY_MS > Date.now()) {
      await ops.deps.pool.query(`alter table webhook_event_payloads detach partition "${partition.name}"`);
      await ops.deps.pool.query(`drop table "${partition.name}"`);
    }
  }
}

const event = () => ({
  provider: 'stripe',
  eventId: `evt_${randomUUID()}`,
  type: 'invoice.paid',
  payloadText: '{"id":"x"}',
  headers: {},
});

describe('payload partitions', () => {
  it('are named by their UTC day, webhook_event_payloads_pYYYYMMDD, and only such names are read back as days', () => {
    expect(partitionName(new Date('2026-12-05T23:59:59.999Z'))).toBe('webhook_event_payloads_p20261205');
    expect(partitionDay('webhook_event_payloads_p20261205')).toEqual(new Date('2026-12-05T00:00:00.000Z'));
    expect(partitionDay('webhook_event_payloads_default')).toBeNull();
  });

  it('without a partition for today the receiver answers unavailable (retryable), and records again once one exists', async () => {
    await dropDaysAhead();
    const refused = await ingest(ops.deps, event()).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnavailableError);
    expect((refused as UnavailableError).retryable).toBe(true);

    const { created } = await ensurePayloadPartitions(ops.deps.pool);
    expect(created).toEqual(
      Array.from({ length: PARTITION_DAYS_AHEAD + 1 }, (_, i) => nameOf(Date.now() + i * DAY_MS)),
    );
    const accepted = event();
    expect(await ingest(ops.deps, accepted)).toBe('accepted');
    const { rows } = await ops.deps.pool.query(
      `select tableoid::regclass::text as partition from webhook_event_payloads where event_id = $1`,
      [accepted.eventId],
    );
    expect(rows).toEqual([{ partition: nameOf(Date.now()) }]);
  });

  it('creates each missing day once when many processes ensure them at once', async () => {
    await dropDaysAhead();
    const racers = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: ops.db.url, max: 1 }));
    try {
      const results = await Promise.all(racers.map((pool) => ensurePayloadPartitions(pool)));
      const created = results.flatMap((result) => result.created).sort();
      expect(created).toHaveLength(PARTITION_DAYS_AHEAD + 1);
      expect(new Set(created).size).toBe(created.length);
      expect(await ensurePayloadPartitions(ops.deps.pool)).toEqual({ created: [] });
    } finally {
      await Promise.all(racers.map((pool) => pool.end()));
    }
  });

  it('a running worker keeps them ahead: at start, and at every interval', async () => {
    await dropDaysAhead();
    const keeper = keepPayloadPartitionsAhead(ops.deps.pool, silentLogger, 200);
    try {
      await keeper.ready;
      expect(await ensurePayloadPartitions(ops.deps.pool)).toEqual({ created: [] });
      await dropDaysAhead();
      await waitFor(
        async () =>
          (await listPayloadPartitions(ops.deps.pool)).some((p) => p.name === nameOf(Date.now())) ||
          undefined,
        { timeout: 10_000, message: 'the next check to create them again' },
      );
    } finally {
      keeper.stop();
    }
  });

  it('retention finishes a drop that an earlier run left pending detach', async () => {
    await ensurePayloadPartitions(ops.deps.pool);
    const day = Date.now() - 40 * DAY_MS;
    await insertEvents(
      ops.deps.pool,
      `insert into webhook_events (provider, event_id, type, status, received_at)
       values ('stripe', 'evt_pending_detach', 't', 'processed', $1)`,
      [new Date(day)],
    );
    const name = nameOf(day);
    // A reader holds the table while a concurrent detach waits for it; the detach is then cancelled, which leaves
    // the partition marked pending detach.
    const reader = await ops.deps.pool.connect();
    const detacher = new pg.Client({ connectionString: ops.db.url });
    await detacher.connect();
    try {
      await reader.query('begin');
      await reader.query('select count(*) from webhook_event_payloads');
      const pid = (await detacher.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const detaching = detacher
        .query(`alter table webhook_event_payloads detach partition "${name}" concurrently`)
        .catch((error: unknown) => error);
      await waitFor(
        async () =>
          (await listPayloadPartitions(ops.deps.pool)).find((p) => p.name === name)?.detachPending ||
          undefined,
        { timeout: 10_000, message: 'the detach to mark the partition pending' },
      );
      await ops.deps.pool.query('select pg_cancel_backend($1)', [pid]);
      expect(await detaching).toMatchObject({ code: '57014' });
      await reader.query('commit');
    } finally {
      reader.release();
      await detacher.end();
    }

    const result = await purgeExpired(ops.deps.pool, { payloadDays: 30 });
    expect(result.complete).toBe(true);
    expect(result.payloadPartitionsDropped).toBeGreaterThanOrEqual(1);
    expect((await listPayloadPartitions(ops.deps.pool)).map((p) => p.name)).not.toContain(name);
    const { rows } = await ops.deps.pool.query(`select to_regclass($1) as table`, [name]);
    expect(rows).toEqual([{ table: null }]);
  });
});
