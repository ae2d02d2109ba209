import { CodedError, WebhookError, type WebhookErrorCode } from '@webhook-inbox/inbox/errors';
import { HostNotAllowedError } from '@webhook-inbox/operator/access/allowed-hosts';
import { TokenError, type TokenErrorCode } from '@webhook-inbox/operator/access/tokens';
import { InvalidFilterError } from '@webhook-inbox/inbox/event-store';
import { CertificateError, type CertificateErrorCode, type Provider } from '@webhook-inbox/providers';
import { ListenError } from '@webhook-inbox/operator/listen';
import { ReplayError } from '@webhook-inbox/operator/replay';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The admin API's refusals that are the request's fault. */
type AdminErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'invalid_filter'
  | 'invalid_request'
  | 'group_required'
  | 'unknown_effect'
  | ListenError['code'];

/** A refused admin request, thrown by the admin routes and answered by `mapError` like every other error. */
export class AdminError extends CodedError<AdminErrorCode> {
  override name = 'AdminError';
}

/**
 * Too many refused attempts from this client (`admin-throttle.ts`): refused unchecked, right token or wrong, until
 * `retryAfterSeconds` have passed.
 */
export class ThrottledError extends Error {
  readonly code = 'too_many_attempts';
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(`too many refused attempts from your address: try again in ${retryAfterSeconds} s`);
    this.name = 'ThrottledError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export type ErrorCode =
  | WebhookErrorCode
  | CertificateErrorCode
  | AdminErrorCode
  | TokenErrorCode
  | ThrottledError['code']
  | HostNotAllowedError['code']
  | 'internal_error';

/**
 * The refusals of a request's signature (its header, its match, its timestamp, the certificate it names): what a
 * rotated secret not deployed, or a forger, causes.
 */
export const SIGNATURE_CODES: ReadonlySet<string> = new Set([
  'missing_signature',
  'invalid_signature',
  'timestamp_out_of_tolerance',
  'certificate_url_refused',
  'certificate_invalid',
]);

/** Every error code and its status: the only place a status is decided. */
const STATUS = {
  missing_signature: 400,
  invalid_signature: 400,
  timestamp_out_of_tolerance: 400,
  invalid_payload: 400,
  payload_too_large: 413,
  batch_too_large: 413,
  body_timeout: 408,
  unknown_provider: 404,
  unavailable: 503,
  // A certificate URL off the provider's hosts, or no usable certificate there, never succeeds; a host that did
  // not answer may later, so the sender is asked to retry.
  certificate_url_refused: 400,
  certificate_invalid: 400,
  certificate_unavailable: 503,
  unauthorized: 401,
  token_expired: 401,
  token_revoked: 401,
  forbidden: 403,
  not_found: 404,
  unknown_listener: 404,
  token_exists: 409,
  invalid_filter: 400,
  group_required: 400,
  invalid_request: 400,
  unknown_effect: 400,
  too_many_attempts: 429,
  host_not_allowed: 421,
  internal_error: 500,
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

/** Hono's own middleware (bearerAuth) throws `HTTPException`s: their status names our code. */
const HTTP_EXCEPTION_CODES: Partial<Record<number, { code: ErrorCode; message: string }>> = {
  400: { code: 'invalid_request', message: 'malformed Authorization header; send "Bearer <token>"' },
  401: {
    code: 'unauthorized',
    message: 'missing or wrong bearer token; send "Authorization: Bearer <token>"',
  },
  404: { code: 'not_found', message: 'no such route' },
  413: { code: 'payload_too_large', message: 'the body is too large' },
};

/**
 * How long a sender should wait before retrying a retryable error (503 `unavailable`, `certificate_unavailable`): long enough for a
 * restarting database or a drained body budget, short enough that a provider with its own backoff loses
 * nothing.
 */
const RETRY_AFTER_SECONDS = 5;

/** The JSON error body: `{"error":{"code","message"}}`. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

interface MappedError {
  status: ContentfulStatusCode;
  body: ErrorBody;
  /** False for a bug: it is logged with its stack and answered 500. */
  expected: boolean;
  /** `Retry-After` on a retryable error, `WWW-Authenticate` on a 401. */
  headers: Record<string, string>;
}

function mapped(code: ErrorCode, message: string, headers: Record<string, string> = {}): MappedError {
  return {
    status: STATUS[code],
    body: { error: { code, message } },
    expected: code !== 'internal_error',
    headers,
  };
}

/**
 * The one place an error becomes an HTTP status. Typed errors carry a stable code (a bad signature is a 400
 * `invalid_signature`, a database that cannot record the event a 503 `unavailable` with `Retry-After`, a bad
 * admin filter a 400 `invalid_filter`); anything else reaching here is a bug and answers a generic 500 that
 * reveals nothing about the internals.
 */
export function mapError(error: unknown, source?: Pick<Provider, 'signatureRefusalStatus'>): MappedError {
  if (error instanceof WebhookError) {
    const headers: Record<string, string> = error.retryable
      ? { 'retry-after': String(RETRY_AFTER_SECONDS) }
      : {};
    const refusal = mapped(error.code, error.message, headers);
    // A sender may require another status for a bad signature (Discord: 401); the code stays the same.
    const status = SIGNATURE_CODES.has(error.code) ? source?.signatureRefusalStatus : undefined;
    return status === undefined ? refusal : { ...refusal, status };
  }
  if (error instanceof CertificateError) {
    return mapped(
      error.code,
      error.message,
      error.retryable ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {},
    );
  }
  if (error instanceof AdminError || error instanceof ReplayError || error instanceof ListenError)
    return mapped(error.code, error.message);
  if (error instanceof TokenError) {
    // An expired or revoked token is refused as a wrong one is, with the same challenge.
    const challenge: Record<string, string> =
      error.code === 'token_expired' || error.code === 'token_revoked'
        ? { 'www-authenticate': 'Bearer error="invalid_token"' }
        : {};
    return mapped(error.code, error.message, challenge);
  }
  if (error instanceof ThrottledError) {
    return mapped(error.code, error.message, { 'retry-after': String(error.retryAfterSeconds) });
  }
  if (error instanceof HostNotAllowedError) return mapped(error.code, error.message);
  if (error instanceof InvalidFilterError) return mapped('invalid_filter', error.message);
  if (error instanceof HTTPException) {
    const known = HTTP_EXCEPTION_CODES[error.status];
    if (known) {
      const challenge = error.res?.headers.get('www-authenticate');
      return mapped(
        known.code,
        error.message || known.message,
        challenge ? { 'www-authenticate': challenge } : {},
      );
    }
  }
  return mapped('internal_error', 'unexpected error; the request was not recorded');
}

/** The answer for a mapped error: its status, JSON body and headers. */
export function errorResponse(c: Context, error: MappedError): Response {
  return c.json(error.body, error.status, error.headers);
}
