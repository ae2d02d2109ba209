import { DESTINATION_STATES } from '@webhook-inbox/db/statuses';
import {
  DELIVERY_OUTCOMES,
  destinationQueue,
  type DeliveryObserver,
} from '@webhook-inbox/inbox/destinations';
import { errorLine } from '@webhook-inbox/inbox/error-text';
import { destinationStates } from '@webhook-inbox/inbox/sql';
import { pgbossJobs } from '@webhook-inbox/operator/sql';
import type pg from 'pg';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Logger } from './logger.ts';

interface DestinationMetricsOptions {
  /** Where the scrape reads the states and backlogs. */
  pool: pg.Pool;
  /** The destinations this worker delivers to: the only values of the `destination` label. */
  destinations: readonly string[];
  logger: Logger;
}

interface Snapshot {
  states: destinationStates.DestinationStateRow[];
  backlogs: pgbossJobs.DestinationBacklogRow[];
}

/**
 * Per destination (docs/destinations.md#metrics): its delivery requests by outcome and their latency, counted as
 * they end; its backlog and state, read from the database at scrape time (two indexed statements per scrape, shared
 * by both gauges). The `destination` label takes only the names of the worker's own destinations, declared in the
 * destinations file, so the series are bounded; every one is reported from the start, at 0.
 */
export function registerDestinationMetrics(
  registry: Registry,
  { pool, destinations, logger }: DestinationMetricsOptions,
): DeliveryObserver {
  const deliveries = new Counter({
    name: 'webhook_destination_deliveries_total',
    help: 'Delivery requests by destination and outcome: 2xx, 3xx, 4xx, 5xx, network_error (no answer), refused (a restricted address).',
    labelNames: ['destination', 'outcome'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'webhook_destination_delivery_duration_seconds',
    help: 'Time from a delivery request sent to its answer (or its failure), by destination.',
    labelNames: ['destination'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  for (const destination of destinations) {
    for (const outcome of DELIVERY_OUTCOMES) deliveries.inc({ destination, outcome }, 0);
    latency.zero({ destination });
  }

  // The gauges of one scrape are collected together: they share the read under way.
  let reading: Promise<Snapshot | undefined> | undefined;
  const read = () =>
    (reading ??= load().finally(() => {
      reading = undefined;
    }));
  async function load(): Promise<Snapshot | undefined> {
    try {
      const [states, backlogs] = await Promise.all([
        pool.query<destinationStates.DestinationStateRow>(destinationStates.selectDestinationStates()),
        pool.query<pgbossJobs.DestinationBacklogRow>(
          pgbossJobs.selectDestinationBacklogs(destinations.map(destinationQueue)),
        ),
      ]);
      return { states: states.rows, backlogs: backlogs.rows };
    } catch (error) {
      logger.warn({ err: errorLine(error) }, 'metrics: could not read the destinations');
      return undefined;
    }
  }

  /** A gauge read at scrape time: reset, then `fill` for each destination from one snapshot of the database. */
  function snapshotGauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (
      set: (labels: Record<L, string>, value: number) => void,
      snapshot: Snapshot,
      destination: string,
    ) => void,
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        const snapshot = await read();
        if (!snapshot) return;
        for (const destination of destinations)
          fill((labels, value) => this.set(labels, value), snapshot, destination);
      },
    });
  }

  if (destinations.length > 0) {
    snapshotGauge(
      'webhook_destination_backlog',
      'Deliveries not done yet, by destination: waiting to run, for a retry, while paused or open, or running.',
      ['destination'],
      (set, snapshot, destination) => {
        const backlog = snapshot.backlogs.find((b) => b.queue === destinationQueue(destination));
        set({ destination }, backlog?.pending ?? 0);
      },
    );
    snapshotGauge(
      'webhook_destination_state',
      "1 for a destination's state (active, paused, open: the circuit breaker's), 0 for the others.",
      ['destination', 'state'],
      (set, snapshot, destination) => {
        const row = snapshot.states.find((s) => s.name === destination);
        if (!row) return;
        for (const state of DESTINATION_STATES) set({ destination, state }, row.state === state ? 1 : 0);
      },
    );
  }

  return {
    delivery({ destination, outcome, durationMs }) {
      deliveries.inc({ destination, outcome });
      latency.observe({ destination }, durationMs / 1000);
    },
  };
}
