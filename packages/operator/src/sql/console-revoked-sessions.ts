import type { Statement } from '@webhook-inbox/inbox/sql';

/**
 * Statements on `console_revoked_sessions`: signed-out console sessions (the cookie alone would stay valid until it
 * expires).
 */

/** Sign-out: the session is refused from now on; rows of sessions already expired go at the same time. */
export function revokeSession(sessionId: string, expiresAt: Date): Statement {
  return {
    text: `with gone as (delete from console_revoked_sessions where expires_at < now())
           insert into console_revoked_sessions (session_id, expires_at) values ($1, $2)
           on conflict (session_id) do nothing`,
    values: [sessionId, expiresAt],
  };
}

/** Every request with a session: one primary-key lookup. */
export function isRevoked(sessionId: string): Statement {
  return {
    text: `select exists (select 1 from console_revoked_sessions where session_id = $1) as revoked`,
    values: [sessionId],
  };
}
