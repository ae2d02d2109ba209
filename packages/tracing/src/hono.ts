import { httpInstrumentationMiddleware } from '@hono/otel';
import type { MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';

/**
 * The server span of each request to a Hono app, by Hono's maintained OpenTelemetry middleware (method, route,
 * status); the receiver's webhook route adds the provider, the outcome and the event key (`annotateRequest` of
 * `@webhook-inbox/inbox/telemetry`). Its own entry point, so a process without Hono never loads it.
 */
export function requestSpans(serviceName: string): MiddlewareHandler<BlankEnv> {
  return httpInstrumentationMiddleware({ serviceName });
}
