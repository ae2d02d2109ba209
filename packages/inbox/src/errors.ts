/**
 * The errors a webhook request can end in beyond verification (the body's size and deadline, an unknown source, a
 * database that could not record): each a `WebhookError` with a stable `code`, the class `@webhook-inbox/providers`
 * defines for its refusals, so the receiver maps every code to its status in one place
 * (`apps/receiver/src/http-errors.ts`).
 */
import { WebhookError } from '@webhook-inbox/providers/errors';

export {
  CodedError,
  InvalidPayloadError,
  InvalidSignatureError,
  MissingSignatureError,
  TimestampOutOfToleranceError,
  WebhookError,
  type VerificationErrorCode,
  type WebhookErrorCode,
} from '@webhook-inbox/providers/errors';

export class PayloadTooLargeError extends WebhookError {
  constructor(limit: number) {
    super('payload_too_large', `body exceeds the limit of ${limit} bytes`);
    this.name = 'PayloadTooLargeError';
  }
}

/**
 * An authentic batch holding more events than the receiver records per request: refused whole, nothing recorded.
 * Not retryable: the same batch is as large next time.
 */
export class BatchTooLargeError extends WebhookError {
  readonly limit: number;
  constructor(limit: number, events: number) {
    super('batch_too_large', `the batch holds ${events} events; at most ${limit} are recorded per request`);
    this.name = 'BatchTooLargeError';
    this.limit = limit;
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
