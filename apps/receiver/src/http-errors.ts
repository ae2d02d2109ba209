import { WebhookError } from '@webhook-inbox/inbox/errors';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The JSON error body of the contract: `{"error":{"code","message"}}`. */
export interface ErrorBody {
  error: { code: string; message: string };
}

export interface MappedError {
  status: ContentfulStatusCode;
  body: ErrorBody;
  /** False for a bug: it is logged with its stack and answered 500. */
  expected: boolean;
  /** Close the connection after answering (the rest of an oversized body is not worth reading). */
  closeConnection: boolean;
}

/**
 * The one place an error becomes an HTTP status. A `WebhookError` carries its contract code and status (a bad
 * signature is a 400, a database that cannot record the event a 503); anything else reaching here is a bug
 * and answers a generic 500 that reveals nothing about the internals.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof WebhookError) {
    return {
      status: error.status as ContentfulStatusCode,
      body: { error: { code: error.code, message: error.message } },
      expected: true,
      closeConnection: false,
    };
  }
  if (error instanceof HTTPException) {
    const status: ContentfulStatusCode = error.status >= 500 ? 500 : error.status;
    return {
      status,
      body: { error: { code: status >= 500 ? 'internal_error' : 'bad_request', message: error.message } },
      expected: status < 500,
      closeConnection: false,
    };
  }
  return {
    status: 500,
    body: { error: { code: 'internal_error', message: 'unexpected error; the request was not recorded' } },
    expected: false,
    closeConnection: false,
  };
}
