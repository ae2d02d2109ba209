/**
 * Where the inbox's SQL lives: every statement is a named, documented function returning `{ text, values }`
 * (`Statement`), grouped by the table it acts on.
 *
 * - `webhook-events.ts`, `webhook_events`: the receiver's inserts (`ingest()`, group commit), one event (the event
 *   log, the console), replay, retention, reconciliation, the metrics' and the console's counts.
 * - `event-filter.ts`, `webhook_events` read by a filter: the event log's pages (event-store, the console) and
 *   the bulk replay's sets.
 * - `event-payloads.ts`, `webhook_event_payloads` and its daily partitions: the one lookup of an event's payload
 *   (`payloadOf`), their upkeep and retention (the receiver's inserts write it, in `webhook-events.ts`).
 * - `effect-attempts.ts`, `effect_attempts`: every attempt of every effect (the runner writes, the event page,
 *   the admin API and the CLI read), bounded per effect.
 * - `failure-groups.ts`, `failure_groups` and the failing `effect_runs` grouped by normalized error: the
 *   console's failures page and overview, the CLI's `failures`, a group's bulk replay.
 * - `failure-counts.ts`, `failure_count_deltas` and `failure_counts`: the failing rows counted per group, what
 *   the failure groups read, and their fold.
 * - `effect-runs.ts`, `effect_runs`: the event log, replay, the failing effects of the samples and the console.
 * - `idempotency-keys.ts`, `idempotency_keys`: replay, the event that completed a scoped effect (the console).
 * - `alerts-sent.ts`, `alerts_sent`: the alert journal, the console's alerts page.
 * - `audit-log.ts`, `audit_log`: every surface's audit trail (append-only), the console's sign-in throttle.
 * - `api-tokens.ts`, `api_tokens`: the scoped API tokens (`access/tokens.ts`).
 * - `console-revoked-sessions.ts`, `console_revoked_sessions`: the console's sign-outs.
 * - `replay-operations.ts`, `replay_operations`: the console's bulk replays and their runner.
 * - `effect-routes.ts`, `effect_routes`: the effects each consumer group's worker registered (replay,
 *   reconciliation; the receiver's inserts read them to deliver to groups).
 * - `webhook-event-groups.ts`, `webhook_event_groups`: an event's status in the other consumer groups (replay,
 *   the event log, the stats).
 * - `delivery-counts.ts`, `webhook_delivery_counts`: the receiver's per-minute request counts, the overview, retention.
 * - `inbox-samples.ts`, `inbox_samples`: the receiver's per-minute samples of the inbox's state, the overview, retention.
 * - `auth-failures.ts`, `auth_failures`: refused authentication attempts per client (the admin API's throttle).
 * - `pgboss-jobs.ts`, pg-boss's `job` table (read only): the backlog metrics, the console's backlog and an
 *   event's jobs.
 * - `../effects/ledger.ts`, all three: the effect runner's protocol (attempts, claims, completions, settlements),
 *   kept in one module so it reads top to bottom.
 *
 * A statement that reads a second table for its answer (retention counting the ledger rows that go with the
 * events it deletes) lives with the table it changes or counts.
 */
export { Params, type Statement } from './statement.ts';
export * as alertsSent from './alerts-sent.ts';
export * as apiTokens from './api-tokens.ts';
export * as auditLog from './audit-log.ts';
export * as authFailures from './auth-failures.ts';
export * as consoleRevokedSessions from './console-revoked-sessions.ts';
export * as effectRoutes from './effect-routes.ts';
export * as deliveryCounts from './delivery-counts.ts';
export * as effectAttempts from './effect-attempts.ts';
export * as effectRuns from './effect-runs.ts';
export * as eventFilter from './event-filter.ts';
export * as eventPayloads from './event-payloads.ts';
export * as failureCounts from './failure-counts.ts';
export * as failureGroups from './failure-groups.ts';
export * as inboxSamples from './inbox-samples.ts';
export * as idempotencyKeys from './idempotency-keys.ts';
export * as pgbossJobs from './pgboss-jobs.ts';
export * as replayOperations from './replay-operations.ts';
export * as ledger from '../effects/ledger.ts';
export * as webhookEventGroups from './webhook-event-groups.ts';
export * as webhookEvents from './webhook-events.ts';
