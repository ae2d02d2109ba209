/**
 * Every error a webhook request can end in. The receiver maps `status` + `code` to the HTTP contract in one
 * place; nothing else decides a status code. `retryable` says whether the sender should try again (a 503
 * `unavailable`) or whether the request itself is wrong (a 4xx, which a retry will not fix).
 */
export type WebhookErrorCode =
  | 'missing_signature'
  | 'invalid_signature'
  | 'timestamp_out_of_tolerance'
  | 'invalid_payload'
  | 'payload_too_large'
  | 'body_timeout'
  | 'unknown_provider'
  | 'unavailable';

const STATUS: Record<WebhookErrorCode, number> = {
  missing_signature: 400,
  invalid_signature: 400,
  timestamp_out_of_tolerance: 400,
  invalid_payload: 400,
  payload_too_large: 413,
  body_timeout: 408,
  unknown_provider: 404,
  unavailable: 503,
};

export class WebhookError extends Error {
  readonly code: WebhookErrorCode;
  readonly status: number;
  readonly retryable: boolean;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookError';
    this.code = code;
    this.status = STATUS[code];
    this.retryable = code === 'unavailable';
  }
}

/** The signature header is absent (or empty). */
export class MissingSignatureError extends WebhookError {
  constructor(message: string) {
    super('missing_signature', message);
    this.name = 'MissingSignatureError';
  }
}

/** A signature header is present but no signature in it matches any configured secret. */
export class InvalidSignatureError extends WebhookError {
  constructor(message: string) {
    super('invalid_signature', message);
    this.name = 'InvalidSignatureError';
  }
}

/** The signed timestamp is older or newer than the tolerance allows (a replay, or a skewed clock). */
export class TimestampOutOfToleranceError extends WebhookError {
  constructor(message: string) {
    super('timestamp_out_of_tolerance', message);
    this.name = 'TimestampOutOfToleranceError';
  }
}

/** The body is authentic but unusable: not JSON, no event id, or a required header missing. */
export class InvalidPayloadError extends WebhookError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_payload', message, options);
    this.name = 'InvalidPayloadError';
  }
}

export class PayloadTooLargeError extends WebhookError {
  constructor(limit: number) {
    super('payload_too_large', `body exceeds the limit of ${limit} bytes`);
    this.name = 'PayloadTooLargeError';
  }
}

/** The body did not arrive within the receiver's deadline (a stalled or deliberately slow sender). */
export class BodyTimeoutError extends WebhookError {
  constructor(timeoutMs: number) {
    super('body_timeout', `the request body did not arrive within ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

export class UnknownProviderError extends WebhookError {
  constructor(provider: string) {
    super('unknown_provider', `no provider named "${provider}" is configured`);
    this.name = 'UnknownProviderError';
  }
}

/** The event could not be durably recorded; the sender must retry. */
export class UnavailableError extends WebhookError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
    this.name = 'UnavailableError';
  }
}
