import { createPool } from '@webhook-inbox/db';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { normalizeErrorMessage } from '../src/alerts/model.ts';
import { foldFailureCounts } from '../src/failure-counts.ts';
import * as failureGroups from '../src/sql/failure-groups.ts';
import { eventFilter, Params } from '@webhook-inbox/inbox/sql';

// Failure groups: the failing effects grouped by consumer group, effect and the alerts' normalized error.

const db = useTestDatabase();
let pool: pg.Pool;
beforeAll(() => {
  pool = createPool({ connectionString: db.url, max: 3 });
});
afterAll(async () => pool.end());
beforeEach(async () => {
  await pool.query('truncate webhook_events, failure_groups, effect_routes cascade');
});

/** Events of `type` with `effect` failed with `error`, their last attempt `minutesAgo` ago. */
async function seed(
  ids: string[],
  effect: string,
  error: (id: string) => string,
  options: { status?: string; minutesAgo?: number } = {},
): Promise<void> {
  for (const id of ids) {
    await pool.query(
      `insert into webhook_events (provider, event_id, type, status) values ('stripe', $1, 'checkout.session.completed', $2)`,
      [id, options.status ?? 'dead'],
    );
    await pool.query(
      `insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
       values ('stripe', $1, $2, 'failed', 3, $1 || $2, now() - $4 * interval '1 minute', $3)`,
      [id, effect, error(id), options.minutesAgo ?? 5],
    );
  }
}

const groups = async (): Promise<failureGroups.FailureGroupRow[]> =>
  (await pool.query<failureGroups.FailureGroupRow>(failureGroups.selectFailureGroups())).rows;

describe('effect_error_fingerprint', () => {
  it('normalizes as the alerts do', async () => {
    const messages = [
      'connect ECONNREFUSED 127.0.0.1:1025 (ECONNREFUSED)',
      'the checkout session cs_test_a1B2c3D4e5 has no customer email',
      'mail to jane.doe+x@example.com refused: 550 mailbox unavailable',
      'order 1234567890123 of 0f8fad5b-d9cb-469f-a165-70867728950e failed',
      'hash deadbeefcafe0123 mismatch\tafter   retries',
      'duplicate key value violates unique constraint "accounts_email_key" (23505, table accounts)',
      "it's quoted 'x' and \\ back-slashed",
    ];
    const { rows } = await pool.query<{ fp: string }>(
      `select effect_error_fingerprint(m) as fp from unnest($1::text[]) with ordinality t(m, i) order by i`,
      [messages],
    );
    expect(rows.map((r) => r.fp)).toEqual(messages.map(normalizeErrorMessage));
  });
});

describe('failure groups', () => {
  it('splits one effect by its normalized error: 3 connection refusals and 1 missing email are 2 groups', async () => {
    await seed(
      ['evt_a1', 'evt_a2', 'evt_a3'],
      'sendWelcomeEmail',
      () => 'connect ECONNREFUSED 127.0.0.1:1025',
    );
    await seed(['evt_b1'], 'sendWelcomeEmail', (id) => `checkout session of ${id} has no customer email`, {
      status: 'failed',
    });
    await seed(['evt_done'], 'sendWelcomeEmail', () => 'connect ECONNREFUSED 127.0.0.1:1025', {
      status: 'processed',
    });
    const rows = await groups();
    expect(rows.map((g) => [g.group, g.effect, g.fingerprint, g.events, g.dead, g.state])).toEqual([
      ['default', 'sendWelcomeEmail', 'connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>', 3, 3, 'open'],
      ['default', 'sendWelcomeEmail', 'checkout session of evt_b<n> has no customer email', 1, 0, 'open'],
    ]);
    expect(rows[0]?.example[0]).toBe('stripe');
    expect(rows[0]?.trend).toEqual({ '0': 3 });

    const events = await pool.query<{ eventId: string }>(failureGroups.selectGroupEvents(rows[0]!, 10));
    expect(events.rows.map((e) => e.eventId).sort()).toEqual(['evt_a1', 'evt_a2', 'evt_a3']);

    const params = new Params();
    const clause = eventFilter.failingWith('webhook_events', rows[1]!.effect, rows[1]!.fingerprint, params);
    const matched = await pool.query<{ event_id: string }>(
      `select event_id from webhook_events where ${clause}`,
      params.values,
    );
    expect(matched.rows.map((r) => r.event_id)).toEqual(['evt_b1']);
  });

  it("names an effect's consumer group from its route", async () => {
    await pool.query(
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', 'checkout.session.completed', 'syncCrm', 'external', 0, 'billing')`,
    );
    await seed(['evt_c1'], 'syncCrm', () => 'crm down');
    await pool.query(
      `insert into webhook_event_groups (provider, event_id, consumer_group, status) values ('stripe', 'evt_c1', 'billing', 'dead')`,
    );
    expect((await groups()).map((g) => [g.group, g.effect, g.dead])).toEqual([['billing', 'syncCrm', 1]]);
  });

  it('follows the events: a replayed dead event counts as failing, a processed one leaves its group', async () => {
    await seed(['evt_f1', 'evt_f2'], 'syncCrm', () => 'crm down');
    expect((await groups()).map((g) => [g.events, g.dead])).toEqual([[2, 2]]);
    await pool.query(`update webhook_events set status = 'received' where event_id = 'evt_f1'`);
    expect((await groups()).map((g) => [g.events, g.dead])).toEqual([[2, 1]]);
    await pool.query(`update webhook_events set status = 'processed' where event_id = 'evt_f1'`);
    expect((await groups()).map((g) => [g.events, g.dead])).toEqual([[1, 1]]);
    // The same effect failing again with another error moves the event to that error's group.
    await pool.query(
      `update effect_runs set last_error = 'crm timeout after 30 s' where event_id = 'evt_f2'`,
    );
    expect((await groups()).map((g) => [g.fingerprint, g.events, g.dead])).toEqual([
      ['crm timeout after <n> s', 1, 1],
    ]);
  });

  it('acknowledges, resolves, and reopens a resolved group when it fails again', async () => {
    await seed(['evt_r1'], 'provision', () => 'quota exceeded', { minutesAgo: 60 });
    const [group] = await groups();
    await pool.query(failureGroups.acknowledge(group!, 'ana'));
    expect((await groups())[0]).toMatchObject({ state: 'acknowledged', acknowledgedBy: 'ana' });
    await pool.query(failureGroups.resolve(group!, 'ana'));
    expect((await groups())[0]).toMatchObject({ state: 'resolved', reopened: false, resolvedBy: 'ana' });

    // A new failure of the same kind, after the resolution.
    await pool.query(`update failure_groups set resolved_at = now() - interval '1 minute'`);
    await seed(['evt_r2'], 'provision', () => 'quota exceeded', { minutesAgo: 0 });
    expect((await groups())[0]).toMatchObject({ state: 'open', reopened: true, events: 2 });
  });

  it("keeps a cause's identity when it clears and returns: first seen, and the decisions, stay", async () => {
    await seed(['evt_first'], 'syncCrm', (id) => `crm refused contact ${id}Abcdefghij`, { minutesAgo: 180 });
    const [before] = await groups();
    expect(before).toMatchObject({ fingerprint: 'crm refused contact <id>', events: 1 });
    await pool.query(failureGroups.resolve(before!, 'ana'));
    await pool.query(`update failure_groups set resolved_at = now() - interval '1 minute'`);
    // Cleared: its one event processed, its effect completed; no failing row is left.
    await pool.query(
      `update effect_runs set status = 'completed', last_error = null where event_id = 'evt_first'`,
    );
    await pool.query(`update webhook_events set status = 'processed' where event_id = 'evt_first'`);
    expect(await groups()).toEqual([]);
    // The same cause returns with another id: the same group, first seen three hours ago, reopened.
    await seed(['evt_again'], 'syncCrm', (id) => `crm refused contact ${id}Zyxwvutsrq`, { minutesAgo: 0 });
    const [after] = await groups();
    expect(after).toMatchObject({
      fingerprint: before!.fingerprint,
      events: 1,
      state: 'open',
      reopened: true,
      resolvedBy: 'ana',
    });
    expect(after!.firstSeen).toEqual(before!.firstSeen);
    expect(after!.lastSeen.getTime()).toBeGreaterThan(before!.lastSeen.getTime());
  });

  it("keeps a cause's first failure through the minute's fold, with no operator's decision, in any consumer group", async () => {
    await pool.query(
      `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group)
       values ('stripe', 'checkout.session.completed', 'syncLedger', 'external', 0, 'billing')`,
    );
    await seed(['evt_old'], 'syncCrm', () => 'crm timed out', { minutesAgo: 240 });
    await seed(['evt_bill'], 'syncLedger', () => 'ledger refused', { minutesAgo: 120 });
    await foldFailureCounts(pool);
    const stored = await pool.query(
      `select consumer_group, effect, first_seen < now() - interval '100 minutes' as early
         from failure_groups order by consumer_group`,
    );
    expect(stored.rows).toEqual([
      { consumer_group: 'billing', effect: 'syncLedger', early: true },
      { consumer_group: 'default', effect: 'syncCrm', early: true },
    ]);
    const before = (await groups()).find((g) => g.effect === 'syncCrm')!;

    // Cleared, then back: no failing row in between, no decision ever.
    await pool.query(
      `update effect_runs set status = 'completed', last_error = null where event_id = 'evt_old'`,
    );
    await pool.query(`update webhook_events set status = 'processed' where event_id = 'evt_old'`);
    expect((await groups()).map((g) => g.effect)).toEqual(['syncLedger']);
    await seed(['evt_new'], 'syncCrm', () => 'crm timed out', { minutesAgo: 0 });
    const after = (await groups()).find((g) => g.effect === 'syncCrm')!;
    expect(after).toMatchObject({ events: 1, state: 'open' });
    expect(after.firstSeen).toEqual(before.firstSeen);
  });
});
