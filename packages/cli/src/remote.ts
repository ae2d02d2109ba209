import { EXIT, NotFoundError, UsageError } from './errors.ts';

/**
 * The CLI against a remote receiver's admin API (`--url` + `--token` / `WEBHOOK_INBOX_TOKEN`): the same contract a
 * script uses (docs/http.md), so `events`, `show` and `replay` act as the token's role and groups, and the receiver
 * audits them with the token as actor.
 */

export interface AdminApi {
  /** The admin API's base URL, e.g. `http://127.0.0.1:3002` (the management listener). */
  url: string;
  token: string;
}

/** A refusal of the remote admin API that is not the request's shape (401, 403, 429, 5xx). Exit code 1. */
export class RemoteError extends Error {
  readonly exitCode = EXIT.failure;
  /** The answer's status; undefined when there was none. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'RemoteError';
    this.status = status;
  }
}

/** How long a request may take; a long poll asks for its wait beside it. `signal` abandons it (Ctrl-C). */
export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * The admin API could not be reached or did not answer (refused, reset, timed out): the request may be tried
 * again. Exit code 1.
 */
export class UnreachableError extends RemoteError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'UnreachableError';
    this.cause = options?.cause;
  }
}

/** `method /admin<path>` with the token; the JSON answer, or the API's error as the CLI's (404 → exit 3, 400 → 2). */
export async function adminRequest<T>(
  api: AdminApi,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<T> {
  const url = new URL(`/admin${path}`, api.url);
  let response: Response;
  let text: string;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${api.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal ? AbortSignal.any([timeout, options.signal]) : timeout,
    });
    text = await response.text();
  } catch (error) {
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause : (error as Error);
    throw new UnreachableError(`cannot reach the admin API at ${url.origin}: ${reason.message}`, {
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RemoteError(
      `${url.origin} answered ${response.status} with no JSON: is --url the admin API's listener?`,
      response.status,
    );
  }
  if (response.ok) return json as T;
  const error = (json as { error?: { code?: string; message?: string } }).error;
  const message = `${error?.code ?? response.status}: ${error?.message ?? 'refused'}`;
  if (response.status === 404) throw new NotFoundError(message);
  if (response.status === 400) throw new UsageError(message);
  throw new RemoteError(`the admin API refused (${response.status}) ${message}`, response.status);
}

/** `/events/<provider>/<key>`, each part URL-encoded (a Shopify key holds `/`). */
export const eventPath = (provider: string, eventId: string) =>
  `/events/${encodeURIComponent(provider)}/${encodeURIComponent(eventId)}`;
