// Operations: alerts, retention, reconciliation. Wired into the worker, receiver and CLI by their owners.
export {
  alertExcerpt,
  alertFingerprint,
  createAlerter,
  createAlertJournal,
  createRecordedAlerter,
  createSignatureFailureMonitor,
  formatAlert,
  normalizeErrorMessage,
  registerAlertMetrics,
  replayCommand,
  type Alert,
  type AlertKind,
  type AlertJournal,
  type AlertLogger,
  type AlertOutcome,
  type AlertMessage,
  type Alerter,
  type AlerterOptions,
  type AlerterStats,
  type EffectFailedAlert,
  type EventDeadAlert,
  type SignatureFailureMonitor,
  type SignatureFailureMonitorOptions,
  type SignatureFailuresAlert,
} from './alerts/index.ts';
export { readInboxStats, type InboxStats } from './inbox-stats.ts';
export {
  ensurePayloadPartitions,
  keepPayloadPartitionsAhead,
  listPayloadPartitions,
  PARTITION_DAYS_AHEAD,
  type PayloadPartition,
} from './partitions.ts';
export { parseDuration, parseSince, sinceDuration } from './duration.ts';
export {
  reconcileStripe,
  STRIPE_EVENTS_RETENTION_DAYS,
  type ReconcileCounts,
  type ReconcileReport,
  type ReconcileStripeOptions,
} from './reconcile.ts';
export {
  createPurgeHandler,
  MIN_KEY_DAYS,
  MIN_PAYLOAD_DAYS,
  PURGE_QUEUE,
  purgeExpired,
  resolvePurgeOptions,
  RetentionOptionError,
  schedulePurge,
  type PurgeJobData,
  type PurgeOptions,
  type PurgePhases,
  type PurgeResult,
  type SchedulePurgeOptions,
} from './retention.ts';
