import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ReceiverMetrics {
  readonly registry: Registry;
  /** One per finished webhook request: `outcome` is `accepted`, `duplicate` or the error code. */
  readonly requests: Counter<'provider' | 'outcome'>;
  /** Time spent recording the event (checkout, transaction, commit), by outcome. */
  readonly ingestSeconds: Histogram<'outcome'>;
  /** Whole request, from routing to the response being built. */
  readonly requestSeconds: Histogram<'provider'>;
  /** Requests per group-commit transaction, by how it ended (`committed`, `failed`, `split`, `refused`). */
  readonly batchRequests: Histogram<'outcome'>;
}

/** From half a millisecond (a request answered from memory) to 5 s (a pool exhausted): the request path's times. */
const SECONDS_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * A registry per app (not prom-client's global one), so two apps in one process (tests) don't collide.
 * Pool stats are read at scrape time: nothing is counted on the request path for them.
 */
export function createMetrics(
  pool: pg.Pool,
  options: { defaultMetrics?: boolean; inFlight?: () => number; bodyBytes?: () => number } = {},
): ReceiverMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'webhook_requests_total',
    help: 'Webhook requests by provider and outcome (accepted, duplicate, or the error code).',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  });
  const ingestSeconds = new Histogram({
    name: 'webhook_ingest_duration_seconds',
    help: 'Time to record an event and enqueue its job (one transaction), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'webhook_request_duration_seconds',
    help: 'Time from routing a webhook request to its response, by provider.',
    labelNames: ['provider'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const batchRequests = new Histogram({
    name: 'webhook_ingest_batch_requests',
    help:
      'Requests answered per group-commit transaction, by outcome: committed, failed (503 to each), split ' +
      '(a payload PostgreSQL refused, isolated by retrying the halves) or refused (that payload alone, a 400).',
    labelNames: ['outcome'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'The request pool: connections open (total), idle, and checkouts waiting for one.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });

  const inFlight = options.inFlight;
  if (inFlight) {
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'Requests the public listener is handling right now (webhooks and its /healthz).',
      registers: [registry],
      collect() {
        this.set(inFlight());
      },
    });
  }

  const bodyBytes = options.bodyBytes;
  if (bodyBytes) {
    new Gauge({
      name: 'webhook_body_bytes_held',
      help: 'Bytes of webhook bodies being received or handled, counted against WEBHOOK_BODY_BUDGET_BYTES.',
      registers: [registry],
      collect() {
        this.set(bodyBytes());
      },
    });
  }

  return { registry, requests, ingestSeconds, requestSeconds, batchRequests };
}
