/**
 * Every refusal the console answers, with its stable code. The app maps them to statuses in one place
 * (`app.ts`, `onError`); pages and statement modules only throw.
 */
export const CONSOLE_ERRORS = {
  /** No session, or a session cookie that is not ours. */
  unauthorized: 401,
  session_expired: 401,
  /** The login's token is not the admin token. */
  wrong_token: 401,
  /** A state-changing request without the session's CSRF token. */
  csrf_failed: 403,
  /** A request sent from another site (`Origin` or `Sec-Fetch-Site`). */
  cross_origin: 403,
  /** The signed-in role lacks the permission the action needs. */
  forbidden: 403,
  invalid_input: 400,
  unknown_effect: 400,
  not_found: 404,
  /** A search PostgreSQL could not answer within the console's statement timeout. */
  query_too_slow: 422,
  /** The operation is finished and cannot be cancelled. */
  conflict: 409,
  /** Too many refused sign-ins from this address lately. */
  too_many_attempts: 429,
} as const;

export type ConsoleErrorCode = keyof typeof CONSOLE_ERRORS;

export class ConsoleError extends Error {
  readonly code: ConsoleErrorCode;
  constructor(code: ConsoleErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConsoleError';
    this.code = code;
  }
  get status(): (typeof CONSOLE_ERRORS)[ConsoleErrorCode] {
    return CONSOLE_ERRORS[this.code];
  }
}
