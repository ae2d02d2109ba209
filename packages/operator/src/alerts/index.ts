// Operator alerts: what an alert is (model), which payload fields it may show (excerpt), how it reads in Slack
// (slack), how it is grouped and delivered (delivery), its durable record (journal), the monitor that turns refused
// signatures into alerts (signature-monitor), and their counters for Prometheus (metrics).
export type { AlerterOptions, AlerterStats, Alerter, AlertLogger, AlertOutcome } from './alerter.ts';
export { createAlerter } from './delivery.ts';
export { createAlertJournal, createRecordedAlerter, type AlertJournal } from './journal.ts';
export { alertExcerpt } from './excerpt.ts';
export { registerAlertMetrics } from './metrics.ts';
export {
  alertFingerprint,
  normalizeErrorMessage,
  type Alert,
  type AlertKind,
  type DestinationAlert,
  type EffectFailedAlert,
  type EventDeadAlert,
  type SignatureFailuresAlert,
} from './model.ts';
export {
  createSignatureFailureMonitor,
  type SignatureFailureMonitor,
  type SignatureFailureMonitorOptions,
} from './signature-monitor.ts';
export { formatAlert, replayCommand, type AlertMessage } from './slack.ts';
export {
  startDestinationMonitor,
  type DestinationFailureRate,
  type DestinationMonitor,
  type DestinationMonitorOptions,
} from './destination-monitor.ts';
