import type { InboxObserver } from '@webhook-inbox/inbox';
import type { PurgeResult } from '@webhook-inbox/operator';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface WorkerMetrics {
  readonly registry: Registry;
  /** Feeds the counters from the runner. */
  readonly observer: InboxObserver;
  /** Feeds the retention counters from the purge handler (`createPurgeHandler`'s `onRun`). */
  retentionRun(run: { result: PurgeResult } | { error: unknown }): void;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** A registry per worker (not prom-client's global one), so two workers in one process (tests) don't collide. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): WorkerMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const effects = new Counter({
    name: 'webhook_effects_total',
    help: 'Effect attempts by effect and outcome: completed, failed, or skipped (already completed).',
    labelNames: ['provider', 'effect', 'outcome'] as const,
    registers: [registry],
  });
  const effectSeconds = new Histogram({
    name: 'webhook_effect_duration_seconds',
    help: 'Time to run one effect, ledger included, by effect.',
    labelNames: ['effect'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const events = new Counter({
    name: 'webhook_events_settled_total',
    help: "Event attempts ended, by outcome: processed, failed (will retry) or dead; group: the worker's consumer group.",
    labelNames: ['provider', 'outcome', 'group'] as const,
    registers: [registry],
  });
  const eventLatency = new Histogram({
    name: 'webhook_event_latency_seconds',
    help: 'From the event being recorded (accepted) to every effect done, for processed events.',
    labelNames: ['provider'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const batchSeconds = new Histogram({
    name: 'webhook_job_batch_duration_seconds',
    help: 'Time to handle one batch of jobs fetched from the queue, from fetch to settle.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });

  const retentionRuns = new Counter({
    name: 'webhook_retention_runs_total',
    help: 'Retention purges run here, by outcome: complete, incomplete (stopped early; the next run goes on), failed.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const retentionRows = new Counter({
    name: 'webhook_retention_rows_total',
    help:
      'Rows retention changed: payloads (dropped), keys (events deleted), effect_runs (deleted with them), ' +
      'history (the per-minute rows of the console overview).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const retentionLastSuccess = new Gauge({
    name: 'webhook_retention_last_success_timestamp_seconds',
    help: 'When a retention purge last completed here (Unix seconds); absent until one has.',
    registers: [registry],
  });

  return {
    registry,
    retentionRun(run) {
      if ('error' in run) {
        retentionRuns.inc({ outcome: 'failed' });
        return;
      }
      const { result } = run;
      retentionRuns.inc({ outcome: result.complete ? 'complete' : 'incomplete' });
      retentionRows.inc({ kind: 'payloads' }, result.payloadsPurged);
      retentionRows.inc({ kind: 'keys' }, result.keysDeleted);
      retentionRows.inc({ kind: 'effect_runs' }, result.effectRunsDeleted);
      retentionRows.inc({ kind: 'history' }, result.historyRowsDeleted);
      retentionRows.inc({ kind: 'audit' }, result.auditRowsDeleted);
      if (result.complete) retentionLastSuccess.setToCurrentTime();
    },
    observer: {
      effect(outcome) {
        effects.inc({ provider: outcome.provider, effect: outcome.effect, outcome: outcome.status });
        if (outcome.status !== 'skipped')
          effectSeconds.observe({ effect: outcome.effect }, outcome.durationMs / 1000);
      },
      event(outcome) {
        events.inc({ provider: outcome.provider, outcome: outcome.status, group: outcome.group });
        if (outcome.status === 'processed') {
          eventLatency.observe({ provider: outcome.provider }, outcome.latencyMs / 1000);
        }
      },
      batch(_size, durationMs) {
        batchSeconds.observe(durationMs / 1000);
      },
    },
  };
}
