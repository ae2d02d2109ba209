import { Counter, type Registry } from 'prom-client';
import type { AlerterStats } from './alerter.ts';

/**
 * `webhook_alerts_total{outcome}`: the alerter's running totals (`Alerter.stats()`), read at scrape time, so
 * counting costs nothing when an alert is raised. Sent: delivered (or logged when there is no URL); grouped:
 * folded into a group's summary; failed: given up on after the last attempt; dropped: the queue was full.
 *
 * @example
 * registerAlertMetrics(metrics.registry, () => alerter.stats());
 */
export function registerAlertMetrics(registry: Registry, stats: () => AlerterStats): void {
  new Counter({
    name: 'webhook_alerts_total',
    help: 'Operator alerts by outcome: sent, grouped (folded into a summary), failed, dropped.',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const now = stats();
      this.reset();
      for (const outcome of ['sent', 'grouped', 'failed', 'dropped'] as const) {
        this.inc({ outcome }, now[outcome]);
      }
    },
  });
}
