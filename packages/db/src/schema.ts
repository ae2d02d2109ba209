import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

import { inList } from './check-list.ts';
import {
  ATTEMPT_OUTCOMES,
  DEFAULT_GROUP,
  EFFECT_KINDS,
  EFFECT_STATUSES,
  EVENT_SOURCES,
  EVENT_STATUSES,
  IDEMPOTENCY_KEY_STATUSES,
} from './statuses.ts';

export * from './statuses.ts';
export * from './schema-access.ts';
export * from './schema-operations.ts';
export * from './schema-destinations.ts';
export * from './schema-listeners.ts';

/**
 * One row per event key. The primary key is what makes a redelivery a no-op:
 * the receiver's `INSERT ... ON CONFLICT DO NOTHING` either creates this row or finds it.
 *
 * The payload is not here: it is in `webhook_event_payloads`, partitioned by day, so retention drops whole days of
 * payloads instead of rewriting rows of this table. What stays is narrow (key, type, status, a few headers).
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    /** The delivery headers worth keeping (topic, shop, webhook id, ...); never signatures. */
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    source: text('source', { enum: EVENT_SOURCES }).notNull().default('webhook'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    status: text('status', { enum: EVENT_STATUSES }).notNull().default('received'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    processedAt: timestamp('processed_at', { withTimezone: true }),
    /**
     * What the event is about, read from its body at ingest (packages/providers/src/subject.ts): a Stripe
     * customer and email, a Shopify shop and customer, a repository; lower-cased. Null when the provider has no
     * subject paths or the body held none of them.
     */
    subject: text('subject').array(),
  },
  (t) => [
    primaryKey({ columns: [t.provider, t.eventId] }),
    check('webhook_events_status_check', sql`${t.status} in (${inList(EVENT_STATUSES)})`),
    check('webhook_events_source_check', sql`${t.source} in (${inList(EVENT_SOURCES)})`),
    index('webhook_events_status_received_at_idx').on(t.status, t.receivedAt),
    index('webhook_events_received_at_idx').on(t.receivedAt),
    // The console's search: `subject @> array['cus_123']`.
    index('webhook_events_subject_idx').using('gin', t.subject),
  ],
);

/**
 * Each event's verified payload, under the event's key and `received_at` (the same value as its
 * `webhook_events` row, written by the same statement). Partitioned by range of `received_at`, one partition per
 * UTC day named `webhook_event_payloads_pYYYYMMDD` (migration 0006, not expressible here), created ahead by the
 * worker's maintenance and dropped whole by retention once every event of that day is finished. An event whose
 * payload row is gone (purged) reads as a null payload.
 *
 * No foreign key to `webhook_events`: a partitioned table's rows are dropped a partition at a time, and key
 * retention deletes `webhook_events` rows without touching this table (an orphaned payload goes with its day).
 */
export const webhookEventPayloads = pgTable(
  'webhook_event_payloads',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull(),
    payload: jsonb('payload').notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId, t.receivedAt] })],
);

/** The effect ledger: one row per (event, effect). A `completed` row means the effect never runs again. */
export const effectRuns = pgTable(
  'effect_runs',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    effect: text('effect').notNull(),
    status: text('status', { enum: EFFECT_STATUSES }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    idempotencyKey: text('idempotency_key').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    /** Set when an operator re-ran a completed effect on purpose (`replay --force-effect`). */
    forcedAt: timestamp('forced_at', { withTimezone: true }),
    /**
     * Kept by triggers while the row is `failed` (migration 0012), so the failure groups (`sql/failure-groups.ts`)
     * read the failing rows alone, never the events: `last_error` normalized as the alerts do
     * (`effect_error_fingerprint`), the event's type (which route, so which consumer group) and its state in the
     * default group, `unfinished`, `dead` or `processed`, followed as the event's status changes.
     */
    fingerprint: text('fingerprint'),
    eventType: text('event_type'),
    eventState: text('event_state'),
  },
  (t) => [
    primaryKey({ columns: [t.provider, t.eventId, t.effect] }),
    // Purging an event key (retention) takes its ledger with it.
    foreignKey({
      columns: [t.provider, t.eventId],
      foreignColumns: [webhookEvents.provider, webhookEvents.eventId],
    }).onDelete('cascade'),
    check('effect_runs_status_check', sql`${t.status} in (${inList(EFFECT_STATUSES)})`),
    // The failing rows alone, however long the ledger's history, by group and time, with every column the failure
    // groups read (an index-only scan): `sql/failure-groups.ts`.
    index('effect_runs_failing_idx')
      .on(t.effect, t.fingerprint, t.startedAt, t.eventState, t.eventType, t.provider, t.eventId)
      .where(sql`${t.status} = 'failed'`),
    // The last hours' failures alone: the failure groups' trend.
    index('effect_runs_failed_at_idx')
      .on(t.startedAt)
      .where(sql`${t.status} = 'failed'`),
  ],
);

/**
 * Once-only keys for effects whose scope is wider than one event (the welcome email, once per account) and for
 * every external effect (claimed before it happens, marked after). Not tied to `webhook_events`: retention
 * purges events, but a key that was used must stay used.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    key: text('key').primaryKey(),
    effect: text('effect').notNull(),
    /** The event whose effect last claimed or completed the key. */
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    status: text('status', { enum: IDEMPOTENCY_KEY_STATUSES }).notNull(),
    /** Claims made; more than one completed claim is impossible, more than one attempt is not. */
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    claimedAt: timestamp('claimed_at', { withTimezone: true }),
    /**
     * While a key is `claimed` and this is still ahead, the attempt that claimed it may be running the effect or
     * retrying its "done" mark: another claimant waits rather than run the effect a second time. The claiming
     * job's expiry (its lease); null before 0002, and after an attempt gave its claim up.
     */
    claimExpiresAt: timestamp('claim_expires_at', { withTimezone: true }),
    /**
     * The fencing token of the key's latest claim: a fresh random value on every claim, so an attempt that lost its
     * lease (its worker froze, the claim expired and another attempt took it) no longer matches, and its renewals,
     * its check before the effect's call and its marks change nothing (`@webhook-inbox/inbox`'s `sql/idempotency-keys.ts`). Null before 0014.
     */
    claimToken: uuid('claim_token'),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('idempotency_keys_status_check', sql`${t.status} in (${inList(IDEMPOTENCY_KEY_STATUSES)})`)],
);

/**
 * The effects the worker registered, one row per (provider, event type, effect), in the order they run
 * (`position`). The worker replaces the rows when it starts; replays (CLI, admin API, console) and Stripe
 * reconciliation read them, so they know the effects of the code that runs without importing it.
 */
export const effectRoutes = pgTable(
  'effect_routes',
  {
    provider: text('provider').notNull(),
    eventType: text('event_type').notNull(),
    effect: text('effect').notNull(),
    kind: text('kind', { enum: EFFECT_KINDS }).notNull(),
    position: integer('position').notNull(),
    /**
     * The consumer group of the worker that registered it. Not part of the key: an effect name is unique per
     * (provider, event type) across groups, because the ledger (`effect_runs`) is keyed by event and effect.
     */
    consumerGroup: text('consumer_group').notNull().default(DEFAULT_GROUP),
    registeredAt: timestamp('registered_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.provider, t.eventType, t.effect] }),
    check('effect_routes_kind_check', sql`${t.kind} in (${inList(EFFECT_KINDS)})`),
  ],
);

/**
 * An event's status in one consumer group other than the default (whose status is `webhook_events.status`): one
 * row per (event, group) created in the receiver's transaction for every new event whose type that group has an
 * effect for, or by a replay for that group. The group's worker starts, settles and marks its rows dead as the
 * default group's worker does `webhook_events`'s; retention keeps an event while any of its rows is unfinished.
 */
export const webhookEventGroups = pgTable(
  'webhook_event_groups',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    status: text('status', { enum: EVENT_STATUSES }).notNull().default('received'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    processedAt: timestamp('processed_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.provider, t.eventId, t.consumerGroup] }),
    foreignKey({
      columns: [t.provider, t.eventId],
      foreignColumns: [webhookEvents.provider, webhookEvents.eventId],
    }).onDelete('cascade'),
    check('webhook_event_groups_status_check', sql`${t.status} in (${inList(EVENT_STATUSES)})`),
    // The backlog per group and status (stats, metrics) without reading the finished rows.
    index('webhook_event_groups_unfinished_idx')
      .on(t.consumerGroup, t.status)
      .where(sql`${t.status} <> 'processed'`),
  ],
);

/**
 * Webhook requests per minute, provider and outcome: what the console's overview charts as accepted, duplicate
 * and refused. The receiver counts in memory and adds its counts here every few seconds with one upsert, off the
 * request path; every receiver adds to the same rows.
 */
export const webhookDeliveryCounts = pgTable(
  'webhook_delivery_counts',
  {
    /** The minute the requests were answered in (UTC, seconds zero). */
    minute: timestamp('minute', { withTimezone: true }).notNull(),
    /** The endpoint's name (`stripe`, `shopify`, a Standard Webhooks name), or `unknown` for a 404 route. */
    provider: text('provider').notNull(),
    /** `accepted`, `duplicate`, or the error code answered (`invalid_signature`, `unavailable`, ...). */
    outcome: text('outcome').notNull(),
    /** The HTTP status of that outcome: 200, a 4xx (refused: never retried to success), 5xx (not recorded). */
    httpStatus: integer('http_status').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.minute, t.provider, t.outcome] })],
);

/**
 * The inbox's state once a minute, for the console's charts over time: events by unfinished status, the age of
 * the oldest event still to process, live jobs of the events queue, and failing effects by name. Any receiver
 * writes the minute's row; the first one wins (`ON CONFLICT DO NOTHING`).
 */
export const inboxSamples = pgTable('inbox_samples', {
  minute: timestamp('minute', { withTimezone: true }).primaryKey(),
  eventsReceived: integer('events_received').notNull(),
  eventsProcessing: integer('events_processing').notNull(),
  eventsFailed: integer('events_failed').notNull(),
  eventsDead: integer('events_dead').notNull(),
  /** Seconds the oldest received, processing or failed event has waited; 0 when none. */
  oldestUnprocessedSeconds: integer('oldest_unprocessed_seconds').notNull(),
  /** Jobs of the events queue waiting to run (`created`), waiting for a retry (`retry`), running (`active`). */
  jobsCreated: integer('jobs_created').notNull(),
  jobsRetry: integer('jobs_retry').notNull(),
  jobsActive: integer('jobs_active').notNull(),
  /** Events not processed with a failed ledger row, per effect name: `{"sendWelcomeEmail": 3}`. */
  failingEffects: jsonb('failing_effects').$type<Record<string, number>>().notNull().default({}),
});

/**
 * Every attempt of every effect, one row each: when it ran, how it ended and why, which worker and job ran it.
 * `effect_runs` keeps the ledger's current state; this keeps its history, so an error survives the replay that
 * fixed it. Written by the runner once per batch, after the attempts' ledger writes; bounded per effect (the
 * first attempt and the last ones, `sql/effect-attempts.ts`), and purged with its event (the foreign key).
 */
export const effectAttempts = pgTable(
  'effect_attempts',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    effect: text('effect').notNull(),
    /** 1 for the effect's first attempt, then one more per attempt, never reused when older ones are dropped. */
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true }).notNull(),
    durationMs: integer('duration_ms').notNull(),
    outcome: text('outcome', { enum: ATTEMPT_OUTCOMES }).notNull(),
    /** `errorLine`'s text, as `effect_runs.last_error`: the database's cause, never parameter values. */
    error: text('error'),
    /** `host/pid` of the worker process. */
    worker: text('worker').notNull(),
    /** The pg-boss job the attempt ran in. */
    jobId: text('job_id'),
    /** A destination's delivery: the HTTP status answered (null when no answer came: refused, timed out). */
    responseStatus: integer('response_status'),
    /** A destination's delivery: the start of the answer's body, at most 1 KiB of text. */
    responseExcerpt: text('response_excerpt'),
  },
  (t) => [
    primaryKey({ columns: [t.provider, t.eventId, t.effect, t.attempt] }),
    foreignKey({
      columns: [t.provider, t.eventId],
      foreignColumns: [webhookEvents.provider, webhookEvents.eventId],
    }).onDelete('cascade'),
    check('effect_attempts_outcome_check', sql`${t.outcome} in (${inList(ATTEMPT_OUTCOMES)})`),
    // A destination's deliveries over a window (success rate, latency percentiles, failures by cause).
    index('effect_attempts_effect_started_idx').on(t.effect, t.startedAt),
  ],
);
