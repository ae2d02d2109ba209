import { isConnectionError } from '@webhook-inbox/inbox/connection-errors';
import type { Context } from 'hono';
import { html } from 'hono/html';
import type { ConsoleEnv } from '../context.ts';
import { ConsoleError } from '../errors.ts';
import { layout, type Html } from './layout.ts';

/**
 * The console's refusals as pages: an HTML page for a browser, JSON for htmx and scripts; the stable code in both.
 * An error that says PostgreSQL did not answer (down, unreachable, out of connections) is a 503
 * `database_unavailable` with what to check, not an internal error: the console can do nothing until it is back.
 */

/** The `ConsoleError` an unexpected error stands for, when it is the database's absence; otherwise undefined. */
export function databaseUnavailable(error: unknown): ConsoleError | undefined {
  if (!isConnectionError(error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return new ConsoleError(
    'database_unavailable',
    `the database is not answering${typeof code === 'string' ? ` (${code})` : ''}`,
    { cause: error },
  );
}

/** Whether the client takes JSON rather than a page: htmx requests, and anything that does not accept HTML. */
export function wantsJson(c: Context): boolean {
  return c.req.header('hx-request') === 'true' || !c.req.header('accept')?.includes('text/html');
}

export function errorPage(
  c: Context<ConsoleEnv>,
  error: ConsoleError,
  base: string,
  status?: 500,
): Response | Promise<Response> {
  const code = status ? 'internal' : error.code;
  const httpStatus = status ?? error.status;
  if (error.code === 'database_unavailable') c.header('Retry-After', '5');
  if (wantsJson(c)) {
    return c.json({ error: { code, message: error.message } }, httpStatus);
  }
  const session = c.get('session') as ConsoleEnv['Variables']['session'] | undefined;
  const csrf = c.get('csrf') as string | undefined;
  return c.html(
    layout({
      base,
      title: error.code === 'database_unavailable' ? 'Database unavailable' : 'Refused',
      // The navigation stays: the operator can go to another page, or reload this one, without typing a URL.
      navigation: true,
      session: session && csrf ? { who: session.who, csrf } : undefined,
      body:
        error.code === 'database_unavailable'
          ? unavailableBody(c.req.url, error)
          : refusedBody(base, error, code, httpStatus),
    }),
    httpStatus,
  );
}

function refusedBody(base: string, error: ConsoleError, code: string, httpStatus: number): Html {
  const signIn = error.code === 'session_expired' || error.code === 'unauthorized';
  return html`<h1>${error.message}</h1>
    <p>Error code <code>${code}</code> (HTTP ${httpStatus}).</p>
    <p>
      <a href="${signIn ? `${base}/login` : `${base}/`}">${signIn ? 'Sign in' : 'Back to the overview'}</a>
    </p>`;
}

function unavailableBody(url: string, error: ConsoleError): Html {
  return html`<h1>The database is not answering</h1>
    <p class="error" role="alert">
      This page needs PostgreSQL, and
      ${error.message.replace(/^the database is not answering/, 'it did not answer')}. Nothing was changed.
      Error code <code>database_unavailable</code> (HTTP 503).
    </p>
    <h2>What to check</h2>
    <ul class="checklist">
      <li>Is PostgreSQL running and reachable from this host? <code>pg_isready -d "$DATABASE_URL"</code></li>
      <li>
        The receiver's <code>GET /readyz</code> answers 503 while the database is down: providers get 503 and
        retry, so no event is lost meanwhile.
      </li>
      <li>
        Too many connections (<code>53300</code>)? Compare <code>max_connections</code> with the pools of the
        receiver, the worker and the console, or put a pooler in front.
      </li>
      <li>Starting up or recovering (<code>57P03</code>)? Wait for it, then reload.</li>
    </ul>
    <p><a class="button" href="${url}">Try again</a></p>`;
}
