import type { Context, MiddlewareHandler } from 'hono';
import { consoleRevokedSessions } from '@webhook-inbox/operator/sql';
import { getCookie } from 'hono/cookie';
import type { TrustedProxies } from '@webhook-inbox/operator/access/forwarded';
import { consoleOrigin, originOf, type ConsoleEnv, type ConsoleServices } from '../context.ts';
import { run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { searchParams } from '../views/format.ts';

export const SESSION_COOKIE = 'wi_console_session';
export const LOGIN_COOKIE = 'wi_console_login';
/** A single sign-on in progress: its state, nonce and PKCE verifier, signed, for 10 minutes. */
export const OIDC_COOKIE = 'wi_console_oidc';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * Headers on every console response: a Content-Security-Policy that allows only the console's own scripts and
 * styles (no inline code, no other origin), no framing, no caching of pages that show payloads, no referrer to other sites.
 * No Access-Control-* header is ever sent: a browser on another origin can neither read a page nor send a
 * preflighted request.
 */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('X-Frame-Options', 'DENY');
  // `same-origin`, not `no-referrer`: with no referrer policy a browser sends `Origin: null` on the console's own
  // form posts, which the same-origin check must refuse; other sites still get no referrer.
  c.header('Referrer-Policy', 'same-origin');
  if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
};

/**
 * A state-changing request must come from the console's own pages: the browser's `Sec-Fetch-Site` and `Origin`
 * say where it was sent from, and a request from another site is refused before anything else (the CSRF token
 * is the check that does not depend on the browser).
 */
export function sameOrigin(trustedProxies: TrustedProxies): MiddlewareHandler {
  return async (c, next) => {
    if (!SAFE_METHODS.has(c.req.method)) {
      const site = c.req.header('sec-fetch-site');
      const origin = c.req.header('origin');
      if (
        (site && site !== 'same-origin' && site !== 'none') ||
        (origin && origin !== consoleOrigin(c, trustedProxies))
      ) {
        throw new ConsoleError('cross_origin', 'this request was sent from another site');
      }
    }
    await next();
  };
}

/**
 * True when the browser reached the console over HTTPS (directly, or through a TLS-terminating proxy of
 * `TRUSTED_PROXIES` that says so in `X-Forwarded-Proto`): its cookies are then `Secure`.
 */
export function isHttps(c: Context, trustedProxies: TrustedProxies): boolean {
  return originOf(c, trustedProxies).scheme === 'https';
}

/**
 * Every route but the login and the assets needs a session that has not been signed out (`console_revoked_sessions`,
 * one primary-key lookup); every state-changing one also needs the session's
 * CSRF token, in the `X-CSRF-Token` header (htmx) or the `_csrf` form field.
 */
export function requireSession(services: ConsoleServices): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const read = services.sessions.read(getCookie(c, SESSION_COOKIE));
    const refused =
      'refused' in read
        ? read.refused
        : (await revoked(services, read.session.id))
          ? 'signed_out'
          : undefined;
    if (refused || 'refused' in read) {
      if (SAFE_METHODS.has(c.req.method) && c.req.header('hx-request') !== 'true') {
        const next = new URL(c.req.url);
        return c.redirect(
          `${services.base}/login?${searchParams({ next: next.pathname + next.search, why: refused ?? 'invalid' })}`,
          303,
        );
      }
      throw refused === 'expired'
        ? new ConsoleError('session_expired', 'your session has expired: sign in again')
        : new ConsoleError(
            'unauthorized',
            refused === 'signed_out' ? 'this session was signed out' : 'sign in first',
          );
    }
    c.set('session', read.session);
    c.set('principal', {
      actor: read.session.who,
      role: read.session.role,
      method: read.session.method,
      groups: read.session.groups ?? null,
      address: originOf(c, services.trustedProxies).address,
    });
    c.set('csrf', services.sessions.csrfToken(read.session));
    if (!SAFE_METHODS.has(c.req.method)) {
      let presented = c.req.header('x-csrf-token');
      if (presented === undefined) {
        const form: Record<string, unknown> = await c.req.parseBody().catch(() => ({}));
        presented = typeof form._csrf === 'string' ? form._csrf : undefined;
      }
      if (!services.sessions.csrfMatches(read.session, presented)) {
        throw new ConsoleError(
          'csrf_failed',
          'this form is stale or was not sent by the console: reload the page',
        );
      }
    }
    await next();
  };
}

async function revoked(services: ConsoleServices, sessionId: string): Promise<boolean> {
  const [row] = await run<{ revoked: boolean }>(services.pool, consoleRevokedSessions.isRevoked(sessionId));
  return row?.revoked === true;
}
