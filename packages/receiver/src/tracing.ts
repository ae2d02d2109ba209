import { requestSpans as honoRequestSpans } from '@webhook-inbox/tracing/hono';
import type { MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';

/**
 * The server span of each webhook request (`@webhook-inbox/tracing/hono`). Loaded only when tracing is on
 * (receiver.ts imports it then, after main.ts started the SDK), like the SDK itself.
 */
export function requestSpans(): MiddlewareHandler<BlankEnv> {
  return honoRequestSpans('webhook-inbox-receiver');
}
