/**
 * How an error becomes text, everywhere: log lines, the ledger's `last_error`, alert messages. Only the class,
 * the code, the message and a database error's constraint and table are ever used: never pg's `detail` or
 * `where` (they can quote row values), never a query's parameter values (drizzle's `Failed query: ... params:
 * ...` wrapper is replaced by the database error it carries), never a payload, and a stack only when a log line
 * asks for one (a bug).
 */

/** The longest one-line error text we store or send. */
export const MAX_ERROR_LINE = 500;

/**
 * One bounded line: the message, then the code when there is one (`terminating connection ... (57P01)`). A value
 * that is not an `Error` (a job's output, a rejected string) is read for its `message`, or `value`, or serialised.
 */
export function errorLine(error: unknown, maxLength = MAX_ERROR_LINE): string {
  const text = rawLine(error).replace(/\s+/g, ' ').trim() || 'unknown error';
  return text.length > maxLength ? `${text.slice(0, maxLength - 3)}...` : text;
}

function rawLine(error: unknown): string {
  if (error === null || error === undefined) return 'unknown error';
  if (typeof error === 'string') return error;
  if (typeof error === 'object') {
    if ('message' in error && typeof error.message === 'string') {
      const query = queryWrapper(error);
      if (query) return query.cause ? rawLine(query.cause) : query.message;
      const line = `${error.message}${codeSuffix(error)}`;
      // A database error under the effect's own wrapper: its cause is what an operator needs.
      const database = isDatabaseError(error) ? undefined : databaseCause(error);
      return database && !error.message.includes(database.message) ? `${line}: ${rawLine(database)}` : line;
    }
    if ('value' in error) return rawLine(error.value);
  }
  try {
    return JSON.stringify(error) ?? typeof error;
  } catch {
    return typeof error;
  }
}

/** ` (code)`, or for a database error ` (23505, table accounts, constraint accounts_email_key)`. */
function codeSuffix(error: object): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' && typeof code !== 'number') return '';
  if (!isDatabaseError(error)) return ` (${code})`;
  const where = [
    error.table ? `table ${error.table}` : '',
    error.constraint ? `constraint ${error.constraint}` : '',
  ].filter(Boolean);
  return ` (${[code, ...where].join(', ')})`;
}

/** What PostgreSQL reported (pg's `DatabaseError`): a SQLSTATE code and a severity, maybe a table and constraint. */
interface DatabaseErrorLike {
  message: string;
  code: string;
  table?: string;
  constraint?: string;
}

function isDatabaseError(error: unknown): error is DatabaseErrorLike {
  if (typeof error !== 'object' || error === null) return false;
  const { code, severity, message } = error as { code?: unknown; severity?: unknown; message?: unknown };
  return (
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    typeof severity === 'string' &&
    typeof message === 'string'
  );
}

/** The first database error in `error`'s causes (a few levels at most), if any. */
function databaseCause(error: object): DatabaseErrorLike | undefined {
  let cause = (error as { cause?: unknown }).cause;
  for (let depth = 0; depth < 5 && typeof cause === 'object' && cause !== null; depth++) {
    if (isDatabaseError(cause)) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * drizzle's `DrizzleQueryError` (`Failed query: <sql>\nparams: <values>`, the database's error as its `cause`):
 * the cause, or the message without its values when it has none.
 */
function queryWrapper(error: object): { cause: unknown; message: string } | undefined {
  const { message, params, cause } = error as { message?: unknown; params?: unknown; cause?: unknown };
  if (typeof message !== 'string' || !message.startsWith('Failed query: ') || params === undefined)
    return undefined;
  const at = message.lastIndexOf('\nparams: ');
  return { cause, message: at === -1 ? 'Failed query' : message.slice(0, at) };
}

/** Structured fields for a log line: type, code, message and the cause's fields; the stack for a bug. */
export function errorFields(error: unknown, options: { stack?: boolean } = {}): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: errorLine(error) };
  const code = (error as { code?: unknown }).code;
  const database = isDatabaseError(error) ? error : undefined;
  const message = queryWrapper(error)?.message ?? error.message;
  return {
    type: error.name,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(database?.table ? { table: database.table } : {}),
    ...(database?.constraint ? { constraint: database.constraint } : {}),
    message,
    ...(options.stack && error.stack ? { stack: error.stack.replace(error.message, message) } : {}),
    ...(error.cause !== undefined ? { cause: errorFields(error.cause, options) } : {}),
  };
}
