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
  constructor(message: string) {
    super(message);
    this.name = 'RemoteError';
  }
}

/** `method /admin<path>` with the token; the JSON answer, or the API's error as the CLI's (404 → exit 3, 400 → 2). */
export async function adminRequest<T>(
  api: AdminApi,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const url = new URL(`/admin${path}`, api.url);
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${api.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new RemoteError(`cannot reach the admin API at ${url.origin}: ${(error as Error).message}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RemoteError(
      `${url.origin} answered ${response.status} with no JSON: is --url the admin API's listener?`,
    );
  }
  if (response.ok) return json as T;
  const error = (json as { error?: { code?: string; message?: string } }).error;
  const message = `${error?.code ?? response.status}: ${error?.message ?? 'refused'}`;
  if (response.status === 404) throw new NotFoundError(message);
  if (response.status === 400) throw new UsageError(message);
  throw new RemoteError(`the admin API refused (${response.status}) ${message}`);
}

/** `/events/<provider>/<key>`, each part URL-encoded (a Shopify key holds `/`). */
export const eventPath = (provider: string, eventId: string) =>
  `/events/${encodeURIComponent(provider)}/${encodeURIComponent(eventId)}`;
