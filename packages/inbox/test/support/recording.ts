import { randomUUID } from 'node:crypto';
import { useTestDatabase } from '@webhook-inbox/testing';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll } from 'vitest';
import type { VerifiedEvent } from '@webhook-inbox/providers';
import { ensureQueues, EVENTS_QUEUE } from '../../src/queue.ts';
import type { IngestDeps } from '../../src/recording.ts';

/** What the recording tests (`ingest()`, the group commit) share: a database with pg-boss's queues, and a look at it. */
export interface RecordingFixture {
  readonly url: string;
  /** A pool of the test's own, to read and change what the code under test cannot see. */
  readonly admin: pg.Pool;
  /** The recording dependencies on `pool`, with the fixture's started pg-boss. */
  deps(pool: pg.Pool): IngestDeps;
  /** The event's rows and its jobs on the default group's queue. */
  stored(event: VerifiedEvent): Promise<{ events: number; jobs: number }>;
}

export function useRecordingDatabase(): RecordingFixture {
  const db = useTestDatabase();
  let boss: PgBoss | undefined;
  let admin: pg.Pool | undefined;
  beforeAll(async () => {
    boss = new PgBoss({
      connectionString: db.url,
      max: 2,
      supervise: false,
      schedule: false,
      migrate: false,
    });
    await boss.start();
    await ensureQueues(boss);
    admin = new pg.Pool({ connectionString: db.url, max: 2 });
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: true });
    await admin?.end();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useRecordingDatabase(): ready only inside tests and hooks');
    return value;
  };
  const fixture: RecordingFixture = {
    get url() {
      return db.url;
    },
    get admin() {
      return started(admin);
    },
    deps: (pool) => ({ pool, boss: started(boss) }),
    async stored(e) {
      const events = await fixture.admin.query<{ n: number }>(
        'select count(*)::int as n from webhook_events where provider = $1 and event_id = $2',
        [e.provider, e.eventId],
      );
      const jobs = await fixture.admin.query<{ n: number }>(
        `select count(*)::int as n from pgboss.job where name = $1 and data->>'provider' = $2 and data->>'eventId' = $3`,
        [EVENTS_QUEUE, e.provider, e.eventId],
      );
      return { events: events.rows[0]!.n, jobs: jobs.rows[0]!.n };
    },
  };
  return fixture;
}

/** A new event (a fresh id), with a number past 2^53 in its payload. */
export const event = (overrides: Partial<VerifiedEvent> = {}): VerifiedEvent => ({
  provider: 'stripe',
  eventId: `evt_${randomUUID()}`,
  type: 'invoice.paid',
  payloadText: '{"id":"x","amount":12345678901234567890}',
  headers: { 'x-test': '1' },
  ...overrides,
});
