import { register } from 'node:module';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { installTelemetry } from '@webhook-inbox/inbox/telemetry';
import { createOtelTelemetry } from './otel.ts';

export interface Tracing {
  /** Ends the SDK: exports the spans still buffered (bounded by the exporter's timeout). */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  /** `service.name` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) says otherwise. */
  serviceName: string;
  /**
   * A span per PostgreSQL statement inside a traced span (the pg instrumentation). The worker's effects want
   * them; the receiver does not: its transactions are shared by the requests of a group commit, so their
   * statements belong to no single request's trace, and wrapping every query costs it throughput. Default: true.
   */
  statementSpans?: boolean;
}

/**
 * Starts the OpenTelemetry SDK for traces, configured by the standard OTEL_* variables (exporter, OTLP endpoint
 * and protocol, sampler, resource), with the PostgreSQL instrumentation when asked for, and installs the inbox's
 * spans (`installTelemetry` of `@webhook-inbox/inbox/telemetry`). Metrics stay on Prometheus and logs on pino: no metric reader or log exporter is set up.
 *
 * Call it before anything imports `pg`: the instrumentation patches modules as they load, and an ES module
 * import is only seen through the loader hook registered here. The apps' entry points import the rest of the
 * app after it (`await import(...)`), and load this module at all only when `tracingEnabled()` says so.
 *
 * @example
 * const tracing = config.tracing
 *   ? startTracing({ serviceName: 'webhook-inbox-receiver', statementSpans: false })
 *   : undefined;
 * const { startReceiver } = await import('./receiver.ts');
 */
export function startTracing(options: StartTracingOptions): Tracing {
  const statementSpans = options.statementSpans ?? true;
  if (statementSpans) {
    // The loader hook wraps only the modules the instrumentation patches: every other import stays as it is.
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
      data: { include: ['pg', 'pg-pool'] },
    });
  }
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    instrumentations: statementSpans
      ? [
          // Statements inside a traced event or effect; pg-boss's polling outside them makes no traces.
          // Statement text only, never parameter values (they hold payloads).
          // No span per pool checkout: the statements are what a trace needs, and a connect span costs.
          new PgInstrumentation({
            requireParentSpan: true,
            enhancedDatabaseReporting: false,
            ignoreConnectSpans: true,
          }),
        ]
      : [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  installTelemetry(createOtelTelemetry());
  return {
    async shutdown() {
      installTelemetry(undefined);
      await sdk.shutdown();
    },
  };
}
