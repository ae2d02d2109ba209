import { httpInstrumentationMiddleware } from '@hono/otel';
import type { MiddlewareHandler } from 'hono';

/**
 * The server span of each webhook request, by Hono's maintained OpenTelemetry middleware (method, route, status);
 * the webhook route adds the provider, the outcome and the event key (`annotateRequest`). Loaded only when
 * tracing is on (receiver.ts imports it then), like the SDK itself.
 */
export function requestSpans(): MiddlewareHandler {
  return httpInstrumentationMiddleware({ serviceName: 'webhook-inbox-receiver' });
}
