import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  unique,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { inList } from './check-list.ts';
import { ALERT_OUTCOMES, OPEN_REPLAY_OPERATION_STATUSES, REPLAY_OPERATION_STATUSES } from './statuses.ts';

/**
 * The tables of what operators do and are told: bulk replays and the events they replayed, the alerts sent, and
 * the decisions about failure groups. Part of the inbox's schema (`schema.ts` exports them).
 */

/**
 * A bulk replay started from the console: the filter, how many events it matched when it started, how many it
 * has replayed, and where it is (a keyset cursor over `(received_at, provider, event_id)`, oldest first). Any
 * process running the console's operations runner claims an unfinished operation with a lease and continues
 * from its cursor, so a restart or a crash resumes it instead of losing it.
 */
export const replayOperations = pgTable(
  'replay_operations',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** The event filter, as the console's events page takes it. */
    filter: jsonb('filter').notNull(),
    /** Only events received up to this instant: the set is fixed when the operation starts. */
    receivedUpTo: timestamp('received_up_to', { withTimezone: true }).notNull(),
    status: text('status', { enum: REPLAY_OPERATION_STATUSES }).notNull().default('pending'),
    total: integer('total').notNull(),
    done: integer('done').notNull().default(0),
    /** Replays that enqueued a job (the others had nothing left to run). */
    enqueued: integer('enqueued').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    /** The last event replayed: `[received_at as ISO text with microseconds, provider, event_id]`. */
    cursor: jsonb('cursor').$type<[string, string, string]>(),
    lastError: text('last_error'),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    cancelledBy: text('cancelled_by'),
    /** Which runner holds the operation, until when; an expired lease is free for any runner to take. */
    lockedBy: text('locked_by'),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
  },
  (t) => [
    check('replay_operations_status_check', sql`${t.status} in (${inList(REPLAY_OPERATION_STATUSES)})`),
    index('replay_operations_unfinished_idx')
      .on(t.createdAt)
      .where(sql`${t.status} in (${inList(OPEN_REPLAY_OPERATION_STATUSES)})`),
  ],
);

/**
 * Every alert message the receiver and the worker sent (or tried to): one row per message, so a group of
 * repeats is one row with its `occurrences`. What the console's alerts page shows; written after the delivery,
 * off the path of the events.
 */
export const alertsSent = pgTable(
  'alerts_sent',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    /** Which process sent it: `webhook-inbox receiver`, `webhook-inbox worker`. */
    service: text('service').notNull(),
    /** `event_dead`, `effect_failed`, `signature_failures`, `destination_open`, `destination_paused`, `destination_failure_rate`. */
    kind: text('kind').notNull(),
    /** What makes two alerts the same problem (kind, provider, type, effect, the normalized error). */
    fingerprint: text('fingerprint').notNull(),
    provider: text('provider').notNull(),
    eventType: text('event_type'),
    effect: text('effect'),
    /** The event of the first alert, or of the last one a summary stands for. */
    eventId: text('event_id'),
    /** Alerts this message stands for: 1, or a summary's repeats. */
    occurrences: integer('occurrences').notNull(),
    outcome: text('outcome', { enum: ALERT_OUTCOMES }).notNull(),
    /** The message's first line (masked, as sent). */
    headline: text('headline').notNull(),
  },
  (t) => [
    check('alerts_sent_outcome_check', sql`${t.outcome} in (${inList(ALERT_OUTCOMES)})`),
    index('alerts_sent_at_idx').on(t.at),
  ],
);

/**
 * A failure group's identity (`sql/failure-groups.ts`: failing effects grouped by consumer group, effect and
 * normalized error) and what operators decided about it. Its counts are computed from the ledger; its row is
 * written with its first failure (`first_seen`) by the minute's fold or an operator's decision, whichever comes
 * first, and kept when its failures clear, so a cause that returns is the same group. A resolved group is open again once it fails after `resolved_at`.
 */
export const failureGroups = pgTable(
  'failure_groups',
  {
    consumerGroup: text('consumer_group').notNull(),
    effect: text('effect').notNull(),
    fingerprint: text('fingerprint').notNull(),
    acknowledgedAt: timestamp('acknowledged_at', { withTimezone: true }),
    acknowledgedBy: text('acknowledged_by'),
    resolvedAt: timestamp('resolved_at', { withTimezone: true }),
    resolvedBy: text('resolved_by'),
    /**
     * The group's first failure ever: its earliest failing ledger row, written once by the minute's fold or an
     * operator's decision (`recordFirstSeen`, `acknowledge`, `resolve`), never moved, so a cause that clears and
     * returns keeps its first sighting.
     */
    firstSeen: timestamp('first_seen', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.consumerGroup, t.effect, t.fingerprint] })],
);

/**
 * The events a bulk replay replayed, one row each, written as each is replayed, with where the event is now in the
 * operation's consumer group: what its outcome counts read (processed, still failing, dead since, purged). No key
 * to `webhook_events`: an event purged since is `gone`.
 */
export const replayOperationEvents = pgTable(
  'replay_operation_events',
  {
    operationId: bigint('operation_id', { mode: 'number' }).notNull(),
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    /**
     * `processed`, `dead`, `unfinished` (received, processing or failed: still failing or waiting) or `gone`: the
     * event's state as `effect_event_state` names it, kept by triggers as its status changes (migration 0013).
     */
    outcome: text('outcome').notNull().default('unfinished'),
  },
  (t) => [
    primaryKey({ columns: [t.operationId, t.provider, t.eventId] }),
    foreignKey({ columns: [t.operationId], foreignColumns: [replayOperations.id] }).onDelete('cascade'),
    // The outcome counts and an outcome's events, from the index alone.
    index('replay_operation_events_outcome_idx').on(t.operationId, t.outcome, t.provider, t.eventId),
    // An event's status change finds the operations that replayed it.
    index('replay_operation_events_event_idx').on(t.provider, t.eventId),
  ],
);

/** What the failure groups count by: the failing `effect_runs` rows' own columns. */
function failureCountKey() {
  return {
    provider: text('provider').notNull(),
    eventType: text('event_type'),
    effect: text('effect').notNull(),
    fingerprint: text('fingerprint'),
    eventState: text('event_state'),
  };
}

/**
 * The failure groups' counts (`sql/failure-groups.ts`): failing `effect_runs` rows per provider, event type,
 * effect, fingerprint and event state (the columns migration 0012's triggers keep). Every change of a failing row
 * appends `+1`/`-1` here in its own transaction (migration 0013's triggers); a read sums these with
 * `failure_counts`, and `foldFailureCounts` moves them there now and then. Append-only, so thousands of
 * concurrent failures of one group never wait on one counter row.
 */
export const failureCountDeltas = pgTable('failure_count_deltas', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  ...failureCountKey(),
  n: integer('n').notNull(),
});

/** `failure_count_deltas` folded: one row per key, written only by `foldFailureCounts`. */
export const failureCounts = pgTable(
  'failure_counts',
  { ...failureCountKey(), n: integer('n').notNull() },
  (t) => [
    unique('failure_counts_key')
      .on(t.provider, t.eventType, t.effect, t.fingerprint, t.eventState)
      .nullsNotDistinct(),
  ],
);
