import { sql } from 'drizzle-orm';
import { check, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
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
