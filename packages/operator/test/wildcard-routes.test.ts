/**
 * A destination registers `*` routes (a wildcard type, or every source): the operator's reads that name an
 * effect's consumer group match them as its exact routes, so a failing `destination.crm` of the billing group is
 * billing's, in its failure groups and in its scoped event views.
 */
import { createPool } from '@webhook-inbox/db';
import { eventFilter } from '@webhook-inbox/inbox/sql';
import { useTestDatabase } from '@webhook-inbox/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as failureGroups from '../src/sql/failure-groups.ts';

const db = useTestDatabase();
let pool: pg.Pool;
beforeAll(async () => {
  pool = createPool({ connectionString: db.url, max: 3 });
  await pool.query(
    `insert into effect_routes (provider, event_type, effect, kind, position, consumer_group) values
       ('stripe', '*', 'destination.crm', 'database', 0, 'billing'),
       ('*', '*', 'destination.crm', 'database', 0, 'billing'),
       ('stripe', 'customer.created', 'welcome', 'external', 0, 'default')`,
  );
  await pool.query(
    `insert into webhook_events (provider, event_id, type, status) values
       ('stripe', 'evt_wild', 'invoice.paid', 'processed'), ('stripe', 'evt_other', 'customer.created', 'processed'),
       ('github', 'gh_1', 'push', 'processed')`,
  );
  await pool.query(
    `insert into webhook_event_groups (provider, event_id, consumer_group, status, attempts, last_error)
     values ('stripe', 'evt_wild', 'billing', 'failed', 2, 'destination.crm: HTTP 503')`,
  );
  await pool.query(
    `insert into effect_runs (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
     values ('stripe', 'evt_wild', 'destination.crm', 'failed', 2, 'k_wild', now(), 'HTTP 503')`,
  );
});
afterAll(async () => pool.end());

describe('wildcard routes in the operator reads', () => {
  it("counts a wildcard destination's failure in its own group, once", async () => {
    const groups = (await pool.query<failureGroups.FailureGroupRow>(failureGroups.selectFailureGroups()))
      .rows;
    expect(groups.map((g) => [g.group, g.effect, g.events])).toEqual([['billing', 'destination.crm', 1]]);
    const key = { group: 'billing', effect: 'destination.crm', fingerprint: groups[0]?.fingerprint ?? '' };
    const events = (await pool.query<{ eventId: string }>(failureGroups.selectGroupEvents(key, 10))).rows;
    expect(events.map((e) => e.eventId)).toEqual(['evt_wild']);
  });

  it("shows a group's scoped views the events its `*` routes match", async () => {
    const ids = async (filter: eventFilter.EventFilter) =>
      (await pool.query<{ eventId: string }>(eventFilter.listEvents(filter, 10))).rows
        .map((r) => r.eventId)
        .sort();
    expect(await ids({ group: 'billing' })).toEqual(['evt_other', 'evt_wild', 'gh_1']);
    expect(await ids({ group: 'billing', status: 'failed' })).toEqual(['evt_wild']);
    expect(await ids({ visibleTo: ['default'] })).toEqual(['evt_other']);
  });
});
