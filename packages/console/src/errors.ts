import { CodedError } from '@webhook-inbox/inbox/errors';

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
  invalid_input: 400,
  /** A consumer group that is not one of the principal's (`?group=`, a replay's group). */
  unknown_group: 400,
  unknown_effect: 400,
  not_found: 404,
  /** A search PostgreSQL could not answer within the console's statement timeout. */
  query_too_slow: 422,
  /** The operation is finished and cannot be cancelled. */
  conflict: 409,
  /** Too many refused sign-ins from this address (or at this account) lately. */
  too_many_attempts: 429,
  /** The signed-in role does not have the permission the action needs (`@webhook-inbox/operator/access/roles`). */
  forbidden: 403,
  /** Signed in at the identity provider, but no entry of `OIDC_ROLES` maps to the user. */
  no_role: 403,
  /** `OIDC_ROLE_CLAIM=email`, and the provider did not verify the address (`email_verified` is not true). */
  email_unverified: 403,
  /** A single sign-on that could not be verified (stale or foreign state, the provider's refusal). */
  oidc_failed: 400,
  /** The identity provider cannot be reached: a sign-in can succeed once it is back. */
  unavailable: 503,
  /** The database did not answer (down, unreachable, out of connections): the page says what to check. */
  database_unavailable: 503,
} as const;

export type ConsoleErrorCode = keyof typeof CONSOLE_ERRORS;

export class ConsoleError extends CodedError<ConsoleErrorCode> {
  override name = 'ConsoleError';
  /** The form field the refusal is about (a filter's `from`), for a page that shows it next to the field. */
  readonly field: string | undefined;
  constructor(code: ConsoleErrorCode, message: string, options?: { cause?: unknown; field?: string }) {
    super(code, message, options);
    this.field = options?.field;
  }
  get status(): (typeof CONSOLE_ERRORS)[ConsoleErrorCode] {
    return CONSOLE_ERRORS[this.code];
  }
}
