import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { inList } from './check-list.ts';

/**
 * The tables of access and its record: who did what (`audit_log`), the API tokens, refused authentications for
 * throttling, and console sessions ended early. Part of the inbox's schema (`schema.ts` exports them).
 */

/**
 * Every state change, from every surface, one row per action: who (`actor`: a verified subject, a token's name,
 * `user@host`, a job's name), with which role and how they proved it (`auth_method`, roles.ts's `AuthMethod`),
 * what (`login`, `replay`, `replay_forced`, `bulk_replay_started`, `purge`, `token_created`, ...), on which target,
 * with the action's parameters. Written in the action's own transaction where there is one, so an action is never
 * done without its row. Append-only: a trigger refuses UPDATE, TRUNCATE, and any DELETE but
 * `audit_log_purge(older_than)`'s (migration 0009).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    actor: text('actor').notNull(),
    /** The actor's role when it acted; null for refused sign-ins (no one was signed in). */
    role: text('role'),
    /** How the actor proved who it is (`oidc`, `break_glass`, `api_token`, `local_cli`, `system`). */
    authMethod: text('auth_method'),
    action: text('action').notNull(),
    /** `stripe evt_1`, `replay operation 12`, `token 3`, or null for actions without one (login). */
    target: text('target'),
    details: jsonb('details').notNull().default({}),
    /** The client address as the server saw it (after `TRUSTED_PROXIES`). */
    remoteAddress: text('remote_address'),
    /**
     * The consumer group of what the action acted on: a replay's, a bulk replay's (its filter's group), a failure
     * group's; null for what belongs to no one group (sign-ins, purges, reconciliations, token changes). A principal
     * limited to groups reads only its groups' rows.
     */
    consumerGroup: text('consumer_group'),
  },
  (t) => [
    index('audit_log_at_idx').on(t.at),
    // The console's audit page filters by each of these, newest first.
    index('audit_log_actor_idx').on(t.actor, t.id),
    index('audit_log_action_idx').on(t.action, t.id),
    index('audit_log_target_idx').on(t.target, t.id),
    index('audit_log_group_idx').on(t.consumerGroup, t.id),
  ],
);

/** The roles of `packages/operator/src/access/roles.ts`, which a token row may hold. */
const TOKEN_ROLES = ['viewer', 'operator', 'admin'] as const;

/**
 * API tokens for scripts, the remote CLI and other teams (`packages/operator/src/sql/api-tokens.ts`). Only the SHA-256
 * of a token is kept; the token itself is shown once, at creation. Each has a role, the consumer groups it is
 * limited to (`null`: every group), an expiry, and the last time it was used (written at most once a minute per
 * token). A revoked row stays, so the audit log's actor `token:<name>` always names a row.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    name: text('name').notNull().unique('api_tokens_name_key'),
    /** Hex SHA-256 of the token: a high-entropy secret needs no salt or slow hash. */
    hash: text('hash').notNull().unique('api_tokens_hash_key'),
    role: text('role', { enum: TOKEN_ROLES }).notNull(),
    groups: text('groups').array(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: text('revoked_by'),
  },
  (t) => [
    check('api_tokens_role_check', sql`${t.role} in (${inList(TOKEN_ROLES)})`),
    check('api_tokens_groups_check', sql`${t.groups} is null or cardinality(${t.groups}) > 0`),
  ],
);

/**
 * Console sessions ended by a sign-out before they expired. Sessions live in signed cookies; a copied cookie of
 * a signed-out session is refused because its id is here. A row is useless once `expires_at` passes (the
 * cookie is refused as expired anyway), and sign-outs delete those.
 */
export const consoleRevokedSessions = pgTable('console_revoked_sessions', {
  sessionId: text('session_id').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Refused authentication attempts per client, for throttling (`packages/operator/src/sql/auth-failures.ts`): one row
 * per (scope, client) with its refusals in the current window and when the window ends. `scope` names what was
 * tried (`admin_api`); `client` is the address it came from, grouped (an IPv6 /64, every loopback address as one),
 * or another key such as an account. A row whose window has ended counts for nothing and is deleted when a new
 * window opens.
 */
export const authFailures = pgTable(
  'auth_failures',
  {
    scope: text('scope').notNull(),
    client: text('client').notNull(),
    failures: integer('failures').notNull(),
    resetsAt: timestamp('resets_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.client] }), index('auth_failures_resets_at_idx').on(t.resetsAt)],
);
