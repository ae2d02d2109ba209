// The status vocabularies, apart from the schema so code on the receiver's hot path can use them without
// loading Drizzle.

/** Where an event is in its life; `webhook_events.status` always holds one of these. */
export const EVENT_STATUSES = ['received', 'processing', 'processed', 'failed', 'dead'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Events the worker still has to run (again): its payload must stay. */
export const PENDING_STATUSES = [
  'received',
  'processing',
  'failed',
] as const satisfies readonly EventStatus[];
/** Events that need nothing more from the worker: processed, or dead (they wait for an operator). */
export const SETTLED_STATUSES = ['processed', 'dead'] as const satisfies readonly EventStatus[];
/** Every status but `processed`, whose count only grows: what the stats count. */
export const UNFINISHED_STATUSES = [
  'received',
  'processing',
  'failed',
  'dead',
] as const satisfies readonly EventStatus[];

/** How an event reached us: a provider's delivery, or our own reconciliation against its API. */
export const EVENT_SOURCES = ['webhook', 'reconciled'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

export const EFFECT_STATUSES = ['running', 'completed', 'failed'] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/** How one attempt of an effect ended: `dead` is a failure after which its event is dead. */
export const ATTEMPT_OUTCOMES = ['completed', 'failed', 'dead'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** `claimed`: the effect may be happening right now, or happened and was never marked (a crash). */
export const IDEMPOTENCY_KEY_STATUSES = ['claimed', 'completed', 'failed'] as const;
export type IdempotencyKeyStatus = (typeof IDEMPOTENCY_KEY_STATUSES)[number];

/** A console bulk replay: waiting for a runner, being replayed, finished, stopped by an operator, or given up. */
export const REPLAY_OPERATION_STATUSES = ['pending', 'running', 'completed', 'cancelled', 'failed'] as const;
export type ReplayOperationStatus = (typeof REPLAY_OPERATION_STATUSES)[number];
/** Operations a runner still has to take or finish. */
export const OPEN_REPLAY_OPERATION_STATUSES = [
  'pending',
  'running',
] as const satisfies readonly ReplayOperationStatus[];

/** What became of an alert message: delivered to ALERT_WEBHOOK_URL, only logged (no URL), or not delivered. */
export const ALERT_OUTCOMES = ['sent', 'logged', 'failed'] as const;
export type AlertOutcome = (typeof ALERT_OUTCOMES)[number];

/** How an effect runs: in the ledger's transaction (`database`), or claimed and marked around it (`external`). */
export const EFFECT_KINDS = ['database', 'external'] as const;
export type EffectKind = (typeof EFFECT_KINDS)[number];

/**
 * The consumer group of a worker that names none: its queue is `webhook-events` and its status is
 * `webhook_events.status`, as for a single worker.
 */
export const DEFAULT_GROUP = 'default';

/**
 * One of these lists as a SQL list of literals, `('processed', 'dead')`, for a statement's text: literals (not a
 * parameter) so the planner matches the partial indexes whose predicates name them. The values are this module's
 * constants, never input.
 */
export function sqlList(values: readonly string[]): string {
  return `(${values.map((value) => `'${value}'`).join(', ')})`;
}

/** A destination's state: delivering, paused (410 Gone, or by an operator), or its circuit open after failures. */
export const DESTINATION_STATES = ['active', 'paused', 'open'] as const;
export type DestinationState = (typeof DESTINATION_STATES)[number];
