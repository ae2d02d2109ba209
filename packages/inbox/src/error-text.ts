/**
 * How an error becomes text, everywhere: log lines, the ledger's `last_error`, alert messages. Only the class,
 * the code and the message are ever used: never pg's `detail` or `where` (they can quote row values), never a
 * payload, and a stack only when a log line asks for one (a bug).
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
    if ('message' in error && typeof error.message === 'string')
      return `${error.message}${codeSuffix(error)}`;
    if ('value' in error) return rawLine(error.value);
  }
  try {
    return JSON.stringify(error) ?? typeof error;
  } catch {
    return typeof error;
  }
}

function codeSuffix(error: object): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? ` (${code})` : '';
}

/** Structured fields for a log line: type, code, message and the cause's fields; the stack for a bug. */
export function errorFields(error: unknown, options: { stack?: boolean } = {}): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: errorLine(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    message: error.message,
    ...(options.stack && error.stack ? { stack: error.stack } : {}),
    ...(error.cause !== undefined ? { cause: errorFields(error.cause, options) } : {}),
  };
}
