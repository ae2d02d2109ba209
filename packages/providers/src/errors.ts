/**
 * Every error a webhook request can end in, each with a stable `code`. The receiver decides the HTTP status of
 * each code, in one place (`apps/receiver/src/http-errors.ts`). `retryable` says whether the same request may
 * succeed later (the database could not record it: the sender should retry) or never will (the request itself
 * is wrong, and retrying it changes nothing).
 */
export type WebhookErrorCode =
  | 'missing_signature'
  | 'invalid_signature'
  | 'timestamp_out_of_tolerance'
  | 'invalid_payload'
  | 'payload_too_large'
  | 'batch_too_large'
  | 'body_timeout'
  | 'unknown_provider'
  | 'unavailable';

/**
 * An error with a stable `code` that callers branch on and the edges map to statuses. Each subclass names its
 * codes, and itself as a field (`override name = '...'`), so a bundler that renames classes leaves the name alone.
 */
export class CodedError<Code extends string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export class WebhookError extends CodedError<WebhookErrorCode> {
  override name = 'WebhookError';
  readonly retryable: boolean;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
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

/**
 * The body is authentic but unusable: not JSON, no event id, a required header missing, or (Shopify) not a payload
 * of its topic or naming another shop than its header.
 */
export class InvalidPayloadError extends WebhookError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_payload', message, options);
    this.name = 'InvalidPayloadError';
  }
}

/** The codes a verification refuses a request with: what `verify` and every provider throw. */
export type VerificationErrorCode = Extract<
  WebhookErrorCode,
  'missing_signature' | 'invalid_signature' | 'timestamp_out_of_tolerance' | 'invalid_payload'
>;
