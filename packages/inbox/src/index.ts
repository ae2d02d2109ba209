export * from './errors.ts';
export { ingest, type IngestDeps, type IngestOutcome } from './ingest.ts';
export { keyOf, type EventKey } from './event-key.ts';
export {
  createGroupCommit,
  DEFAULT_GROUP_COMMIT,
  type BatchReport,
  type GroupCommit,
  type GroupCommitOptions,
} from './group-commit.ts';
export { parseJsonLossless } from './json.ts';
export {
  DEAD_LETTER_QUEUE,
  DEFAULT_GROUP,
  DEFAULT_QUEUE_SETTINGS,
  EVENTS_QUEUE,
  ensureQueues,
  queuesOf,
  validateGroup,
  type EventJob,
  type GroupQueues,
  type QueueSettings,
} from './queue.ts';
export {
  decodeCursor,
  encodeCursor,
  getEvent,
  InvalidFilterError,
  isEventStatus,
  listEvents,
  type EffectRunRow,
  type EventCursor,
  type EventDetail,
  type GroupEventDetail,
  type ListedEvent,
  type EventFilter,
  type EventFilters,
  type EventPage,
  type EventSummary,
  type GetEventOptions,
} from './event-store.ts';
export { configureQueues, validateQueueSettings } from './queue.ts';
export {
  createInbox,
  type Inbox,
  type InboxOptions,
  type InboxStartOptions,
  type EventTypeOf,
  type InboxWorker,
  type StopOptions,
} from './inbox.ts';
export { eventIdempotencyKey, messageIdFor, scopedIdempotencyKey } from './effects/keys.ts';
export {
  database,
  external,
  LeaseLostError,
  PermanentEffectError,
  type DatabaseEffect,
  type DatabaseEffectContext,
  type DatabaseEffectFn,
  type DeadEvent,
  type EffectMap,
  type EffectOutcome,
  type EffectSpec,
  type EventOutcome,
  type ExternalEffect,
  type ExternalEffectContext,
  type ExternalEffectFn,
  type GenericInboxEvent,
  type InboxEventBase,
  type InboxEventFor,
  type InboxObserver,
  type ProviderPayloads,
  type ShopifyInboxEvent,
  type Tx,
  type TypedEventOf,
  type TypedEventType,
  type TypedInboxEvent,
  type TypedProvider,
} from './effects/types.ts';
export { parsePayload, type SchemaOutput, type StandardSchema } from './effects/parse-payload.ts';
export {
  ensurePayloadPartitions,
  keepPayloadPartitionsAhead,
  listPayloadPartitions,
  PARTITION_DAYS_AHEAD,
  type PayloadPartition,
} from './partitions.ts';
export {
  EffectRouteConflictError,
  type EffectLookup,
  loadEffectLookup,
  readAllEffectRoutes,
  readEffectRoutes,
  recordedEventTypes,
  recordEffectRoutes,
} from './effect-routes.ts';
export type { EffectRouteRow, RecordedRouteRow } from './sql/effect-routes.ts';
export { createOperationsBoss, createSenderBoss, type BossOptions } from './boss.ts';
// The inbox's tables travel with @webhook-inbox/db; a team's deploy script applies them from here.
export { INBOX_MIGRATIONS, migrateDatabase, type MigrateOptions, type MigrationSet } from '@webhook-inbox/db';
