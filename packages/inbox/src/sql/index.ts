/**
 * Where the inbox core's SQL lives: every statement is a named, documented function returning `{ text, values }`
 * (`Statement`), grouped by the table it acts on. The tables only the operator side uses (alerts, audit, tokens,
 * failure groups, bulk replays, the per-minute counts, pg-boss's jobs) have theirs in `@webhook-inbox/operator/sql`.
 *
 * - `webhook-events.ts`, `webhook_events`: the receiver's inserts (`ingest()`, group commit), one event (the event
 *   log, the console), replay, retention, reconciliation, the metrics' and the console's counts.
 * - `event-filter.ts`, `webhook_events` read by a filter: the event log's pages (event-store, the console) and
 *   the bulk replay's sets.
 * - `event-payloads.ts`, `webhook_event_payloads` and its daily partitions: the one lookup of an event's payload
 *   (`payloadOf`), their upkeep and retention (the receiver's inserts write it, in `webhook-events.ts`).
 * - `effect-attempts.ts`, `effect_attempts`: every attempt of every effect (the runner writes, the event page,
 *   the admin API and the CLI read), bounded per effect.
 * - `effect-runs.ts`, `effect_runs`: the database effects' claims (with their scoped keys) and failures (the
 *   effect runner), the event log, replay, the failing effects of the samples and the console.
 * - `idempotency-keys.ts`, `idempotency_keys`: the claims, renewals and marks of external effects and of
 *   destinations' deliveries (with the ledger rows they move), replay, the event that completed a scoped effect.
 * - `effect-routes.ts`, `effect_routes`: the effects each consumer group's worker registered (replay,
 *   reconciliation; the receiver's inserts read them to deliver to groups).
 * - `webhook-event-groups.ts`, `webhook_event_groups`: an event's status in the other consumer groups (replay,
 *   the event log, the stats).
 * - `destination-states.ts`, `destination_states`: each destination's circuit, pause and rate limit's schedule (the
 *   deliveries, the CLI).
 * - `destination-slots.ts`, `destination_slots`: each destination's concurrency, shared by its workers.
 * - `deliveries.ts`, a destination delivery's start (the breaker's gate and the event) and its end (the attempt's
 *   row, the key's mark, the breaker, the slot), each one statement composed of the fragments the tables' modules
 *   write.
 * - `ledger.ts`, `webhook_events` and `webhook_event_groups` for the effect runner: an attempt's start,
 *   its settlement, a dead letter's mark.
 *
 * A statement that reads a second table for its answer (retention counting the ledger rows that go with the
 * events it deletes) lives with the table it changes or counts; one that changes two tables at once (a claim and
 * the ledger row that moves with it) lives with the table whose row decides it (the key for an external effect's
 * claim, the ledger row for a database effect's).
 */
export { Params, type Statement } from './statement.ts';
export * as deliveries from './deliveries.ts';
export * as effectRoutes from './effect-routes.ts';
export * as destinationStates from './destination-states.ts';
export * as destinationSlots from './destination-slots.ts';
export * as effectAttempts from './effect-attempts.ts';
export * as effectRuns from './effect-runs.ts';
export * as eventFilter from './event-filter.ts';
export * as eventPayloads from './event-payloads.ts';
export * as idempotencyKeys from './idempotency-keys.ts';
export * as ledger from './ledger.ts';
export * as webhookEventGroups from './webhook-event-groups.ts';
export * as webhookEvents from './webhook-events.ts';
