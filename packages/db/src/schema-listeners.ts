import { sql } from 'drizzle-orm';
import { check, foreignKey, index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { inList } from './check-list.ts';

/** What a listener's requests carry: the envelope (the event's facts around its payload), or the payload alone. */
export const LISTEN_BODIES = ['envelope', 'raw'] as const;

/**
 * `webhook-inbox listen` sessions (docs/destinations.md#local-development), one row per listener the admin API
 * created: whose it is (`actor`, the token's audit name), which events it streams (the consumer groups whose
 * types it sees, `null` for every type; type patterns), and from when. The server keeps its position: the events
 * it acknowledged (`listener_acks`), so a client that reconnects is sent every other event received since
 * `since`, whatever order their transactions committed in. A listener unused for a day is deleted with its acks.
 */
export const listeners = pgTable(
  'listeners',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    actor: text('actor').notNull(),
    /** The consumer groups whose event types it streams (`effect_routes`); null: every event. */
    groups: text('groups').array(),
    /** Event type patterns, `*` matching any run of characters; empty: every type. */
    types: text('types')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    body: text('body', { enum: LISTEN_BODIES }).notNull().default('envelope'),
    /** Events received at or after this are streamed. */
    since: timestamp('since', { withTimezone: true }).notNull().defaultNow(),
    /** The last poll or acknowledgement: a listener idle for a day is deleted. */
    seenAt: timestamp('seen_at', { withTimezone: true }).notNull().defaultNow(),
    /** The client address that created it (after `TRUSTED_PROXIES`). */
    remoteAddress: text('remote_address'),
  },
  (t) => [
    check('listeners_body_check', sql`${t.body} in (${inList(LISTEN_BODIES)})`),
    index('listeners_seen_at_idx').on(t.seenAt),
  ],
);

/** The events a listener's client forwarded and acknowledged: never sent to that listener again. */
export const listenerAcks = pgTable(
  'listener_acks',
  {
    listenerId: uuid('listener_id').notNull(),
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    ackedAt: timestamp('acked_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.listenerId, t.provider, t.eventId] }),
    foreignKey({ columns: [t.listenerId], foreignColumns: [listeners.id] }).onDelete('cascade'),
  ],
);
