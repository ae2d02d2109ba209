import { httpInstrumentationMiddleware } from '@hono/otel';
import { trace } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';

/** What every query value becomes in a span. */
export const REDACTED = 'REDACTED';

/**
 * The request's URL as a span may carry it: the path, and the query with every value replaced by `REDACTED`
 * (`?key=REDACTED&hub.verify_token=REDACTED`). Providers put credentials in the query (an API key, Meta's verify
 * token, a handshake's challenge), and a collector is not a place for them. A parameter without `=` is all value.
 */
export function redactedUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals === -1 ? REDACTED : `${part.slice(0, equals)}=${REDACTED}`;
    });
  return `${url.slice(0, at)}?${query.join('&')}`;
}

/**
 * The server span of each request to a Hono app, by Hono's maintained OpenTelemetry middleware (method, route,
 * status); the receiver's webhook route adds the provider, the outcome and the event key (`annotateRequest` of
 * `@webhook-inbox/inbox/telemetry`). Its own entry point, so a process without Hono never loads it.
 *
 * That middleware sets `url.full` to the whole request URL when it starts the span; the span is exported only once
 * it ends, and it is the active span inside, so the redacted URL replaces it before anything reads it.
 */
export function requestSpans(serviceName: string): MiddlewareHandler<BlankEnv> {
  const spans = httpInstrumentationMiddleware({ serviceName });
  return (c, next) =>
    spans(c, async () => {
      trace.getActiveSpan()?.setAttribute('url.full', redactedUrl(c.req.url));
      await next();
    });
}
