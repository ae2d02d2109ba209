/**
 * The operator side's SQL: every statement a named, documented function returning `{ text, values }` (the inbox
 * core's `Statement`), grouped by the table it acts on. Only the operator surfaces (the console, the admin API,
 * the CLI, retention, alerts) write or read these tables; the core's tables keep their statements in
 * `@webhook-inbox/inbox/sql`.
 *
 * - `alerts-sent.ts`, `alerts_sent`: the alert journal, the console's alerts page.
 * - `audit-log.ts`, `audit_log`: every surface's audit trail (append-only), the console's sign-in throttle.
 * - `api-tokens.ts`, `api_tokens`: the scoped API tokens (`access/tokens.ts`).
 * - `auth-failures.ts`, `auth_failures`: refused authentication attempts per client (the admin API's throttle).
 * - `console-revoked-sessions.ts`, `console_revoked_sessions`: the console's sign-outs.
 * - `failure-groups.ts`, `failure_groups` and the failing `effect_runs` grouped by normalized error: the
 *   console's failures page and overview, the CLI's `failures`, a group's bulk replay.
 * - `failure-counts.ts`, `failure_count_deltas` and `failure_counts`: the failing rows counted per group, what
 *   the failure groups read, and their fold.
 * - `listeners.ts`, `listeners` and `listener_acks`: the `webhook-inbox listen` sessions of the admin API, the
 *   events each acknowledged, and the events each is sent next.
 * - `replay-operations.ts`, `replay_operations`: the console's bulk replays and their runner.
 * - `delivery-counts.ts`, `webhook_delivery_counts`: the receiver's per-minute request counts, the overview, retention.
 * - `inbox-samples.ts`, `inbox_samples`: the receiver's per-minute samples of the inbox's state, the overview,
 *   retention (`per-minute.ts`: what the two per-minute tables share).
 * - `pgboss-jobs.ts`, pg-boss's `job` table (read only): the backlog metrics, the console's backlog and an
 *   event's jobs, replay.
 */
export * as alertsSent from './alerts-sent.ts';
export * as apiTokens from './api-tokens.ts';
export * as auditLog from './audit-log.ts';
export * as authFailures from './auth-failures.ts';
export * as consoleRevokedSessions from './console-revoked-sessions.ts';
export * as deliveryCounts from './delivery-counts.ts';
export * as failureCounts from './failure-counts.ts';
export * as failureGroups from './failure-groups.ts';
export * as inboxSamples from './inbox-samples.ts';
export * as listeners from './listeners.ts';
export * as pgbossJobs from './pgboss-jobs.ts';
export * as replayOperations from './replay-operations.ts';
