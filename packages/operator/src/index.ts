// @webhook-inbox/operator: what the people who run an inbox use, beside the core a product team imports (alerts,
// retention, reconciliation, replay, the stats, the audit trail). Wired into the worker, receiver, console and CLI by
// their owners; access control (roles, tokens, forwarded addresses, throttle) is under `./access/*`.
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
  startDestinationMonitor,
  type Alert,
  type AlertKind,
  type AlertJournal,
  type AlertLogger,
  type AlertOutcome,
  type AlertMessage,
  type Alerter,
  type AlerterOptions,
  type AlerterStats,
  type DestinationAlert,
  type DestinationFailureRate,
  type DestinationMonitor,
  type EffectFailedAlert,
  type EventDeadAlert,
  type SignatureFailureMonitor,
  type SignatureFailureMonitorOptions,
  type SignatureFailuresAlert,
} from './alerts/index.ts';
export { readInboxStats, type InboxStats } from './inbox-stats.ts';
export { auditPurge, auditReconcile } from './audit.ts';
export { parseDuration, parseSince, sinceDuration } from './duration.ts';
// reconcileStripe is on its own subpath, `./reconcile`, the one entry that names the `stripe` package.
export type { ReconcileCounts, ReconcileReport } from './reconcile-report.ts';
export {
  createPurgeHandler,
  PURGE_QUEUE,
  schedulePurge,
  type PurgeJobData,
  type SchedulePurgeOptions,
} from './purge-schedule.ts';
export { purgeExpired, type PurgePhases, type PurgeResult } from './retention.ts';
export {
  MIN_KEY_DAYS,
  MIN_PAYLOAD_DAYS,
  resolvePurgeOptions,
  RetentionOptionError,
  type PurgeOptions,
} from './retention-options.ts';
export {
  replayEvent,
  ReplayError,
  type ReplayDeps,
  type ReplayOptions,
  type ReplayResult,
} from './replay.ts';
export {
  countBulkReplay,
  replayChunk,
  replayEvents,
  type BulkReplayFilters,
  type BulkReplayOptions,
  type BulkReplayResult,
  type BulkReplaySet,
  type ChunkOptions,
  type ChunkOutcome,
} from './bulk-replay.ts';
