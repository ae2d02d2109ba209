import { sql } from 'drizzle-orm';
import { check, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { inList } from './check-list.ts';
import { DESTINATION_STATES } from './statuses.ts';

/**
 * One row per destination a worker has started (the destinations file declares them; this row is what the CLI
 * and the console read of their state). `paused` holds until an operator resumes the destination; `open` is the
 * circuit breaker's: deliveries wait until `probe_at`, when one delivery probes the destination.
 */
export const destinationStates = pgTable(
  'destination_states',
  {
    name: text('name').primaryKey(),
    url: text('url').notNull(),
    state: text('state', { enum: DESTINATION_STATES }).default('active').notNull(),
    /** Why it is paused or open: `410 Gone`, `5 failures in a row: ...`, `paused by an operator`. */
    reason: text('reason'),
    /** Failed deliveries since the last success. */
    consecutiveFailures: integer('consecutive_failures').default(0).notNull(),
    /** While `open`: when the next delivery probes the destination. */
    probeAt: timestamp('probe_at', { withTimezone: true }),
    lastSuccessAt: timestamp('last_success_at', { withTimezone: true }),
    lastFailureAt: timestamp('last_failure_at', { withTimezone: true }),
    /**
     * The rate limit's schedule, shared by every worker: when the next delivery may start. Each delivery takes the
     * later of this and the database's clock as its start, and moves this one interval (1 / rateLimit s) on.
     */
    nextStartAt: timestamp('next_start_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).defaultNow().notNull(),
    /**
     * The causes of this destination's alert episodes already alerted on (`open`, `paused`, `failure_rate`): a
     * worker's alert monitor adds a cause when it claims the episode's one alert, and a cause leaves when its episode
     * ends (the state left, the failure rate back under its threshold). One row and single statements, so one
     * alert per episode however many workers watch the destination.
     */
    alerted: text('alerted')
      .array()
      .default(sql`'{}'::text[]`)
      .notNull(),
  },
  (t) => [check('destination_states_state_check', sql`${t.state} in (${inList(DESTINATION_STATES)})`)],
);

/**
 * A destination's concurrency, shared by every worker: one row per slot (`concurrency` of them). A delivery holds a
 * slot, with a lease, from before its request until its answer; a worker that dies leaves a lease that expires.
 */
export const destinationSlots = pgTable(
  'destination_slots',
  {
    destination: text('destination').notNull(),
    slot: integer('slot').notNull(),
    /** Free when past; the lease of the delivery that holds it. */
    heldUntil: timestamp('held_until', { withTimezone: true })
      .default(sql`'-infinity'`)
      .notNull(),
    /** The holder's token: only the holder frees the slot (a lease taken over after expiry is not freed). */
    token: uuid('token'),
  },
  (t) => [primaryKey({ columns: [t.destination, t.slot] })],
);
