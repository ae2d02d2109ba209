/**
 * Whether an error from pg means the connection to PostgreSQL failed (the server restarting, a network cut, a
 * connection that stopped answering) rather than the statement itself: only those are worth retrying on a new
 * connection. A statement error (a constraint, a syntax error, a trigger's exception) is not, nor is our own
 * shutdown (a pool that was ended).
 */

// Node socket and DNS errors (`err.code`).
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

// SQLSTATEs: 57P01 admin_shutdown (a fast shutdown or pg_terminate_backend), 57P02 crash_shutdown, 57P03
// cannot_connect_now (starting up, shutting down, recovering), 53300 too_many_connections. Class 08
// (connection_exception) is matched as a class below.
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

// pg's and pg-pool's own messages for a connection that died, never came, or stopped answering.
const MESSAGES = [
  /^Connection terminated/, // unexpectedly / due to connection timeout
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Query read timeout$/,
];

export function isConnectionError(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message))) return true;
  // An AggregateError from a connect over several addresses; a wrapped cause.
  if (Array.isArray(errors) && errors.some((inner) => isConnectionError(inner, depth + 1))) return true;
  return isConnectionError(cause, depth + 1);
}
