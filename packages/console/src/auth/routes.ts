import { auditLog } from '@webhook-inbox/operator/sql';
import type { Context } from 'hono';
import { html } from 'hono/html';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { Hono } from 'hono';
import { consoleOrigin, originOf, type ConsoleServices } from '../context.ts';
import { run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { layout } from '../views/layout.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { isHttps, LOGIN_COOKIE, OIDC_COOKIE, SESSION_COOKIE } from './middleware.ts';
import type { OidcClient } from './oidc.ts';
import { loginNonce, sameBytes, type SessionIdentity } from './session.ts';

const REASONS: Record<string, string> = {
  expired: 'Your session has expired. Sign in again.',
  invalid: 'Your session is not valid (a console secret may have changed). Sign in again.',
  signed_out: 'You are signed out.',
};

/** The one account of the break-glass sign-in: what the per-account throttle counts. */
const BREAK_GLASS = 'break-glass';
const OIDC_FLOW_MS = 10 * 60_000;

interface AuthRoutesOptions {
  sessionTtlMs: number;
  throttle: LoginThrottle;
  /** Sign-in through the company's identity provider; undefined: not configured. */
  oidc: OidcClient | undefined;
  /** True when an admin token is configured: the break-glass form is offered. */
  breakGlass: boolean;
}

/**
 * Sign-in and its callback. Operators sign in through the identity provider (authorization code + PKCE; the audit
 * actor is the provider's verified email or subject, the role comes from `OIDC_ROLES`). The admin token is the
 * break-glass sign-in: always `admin`, audited as `break-glass@<address>`. Its form is protected from cross-site
 * posting by a double-submit nonce (a SameSite=Strict cookie and the same value in the form), as there is no
 * session yet.
 */
export function authRoutes(services: ConsoleServices, options: AuthRoutesOptions): Hono {
  const routes = new Hono();
  const cookiePath = services.base || '/';
  const secure = (c: Context) => isHttps(c, services.trustedProxies);
  const address = (c: Context) => originOf(c, services.trustedProxies).address;

  const startSession = async (c: Context, identity: SessionIdentity, details: Record<string, unknown>) => {
    const { session, cookie } = services.sessions.issue(identity);
    setCookie(c, SESSION_COOKIE, cookie, {
      httpOnly: true,
      sameSite: 'Strict',
      secure: secure(c),
      path: cookiePath,
      maxAge: Math.floor(options.sessionTtlMs / 1000),
    });
    await run(
      services.pool,
      auditLog.insertAudit(
        { actor: identity.who, role: identity.role, method: identity.method, address: address(c) },
        {
          action: 'login',
          target: null,
          details: {
            ...details,
            session: session.id.slice(0, 8),
            expiresAt: new Date(session.expiresAt).toISOString(),
          },
        },
      ),
    );
  };
  // Only a path inside the console: never an open redirect.
  const inside = (next: string | undefined) =>
    next?.startsWith(`${services.base}/`) && !next.startsWith('//') ? next : `${services.base}/`;

  routes.get('/login', (c) => {
    const nonce = loginNonce();
    if (options.breakGlass) {
      setCookie(c, LOGIN_COOKIE, nonce, {
        httpOnly: true,
        sameSite: 'Strict',
        secure: secure(c),
        path: cookiePath,
        maxAge: 3600,
      });
    }
    const reason = REASONS[c.req.query('why') ?? ''];
    return c.html(
      loginPage(services.base, options, { nonce, next: c.req.query('next') ?? '', notice: reason }),
    );
  });

  routes.get('/login/oidc', async (c) => {
    if (!options.oidc) throw new ConsoleError('not_found', 'single sign-on is not configured');
    const redirect = options.oidc.redirectUrl(consoleOrigin(c, services.trustedProxies), services.base);
    const { authorizationUrl, pending } = await options.oidc.start(redirect);
    const expiresAt = services.now().getTime() + OIDC_FLOW_MS;
    // Lax: the provider sends the browser back with a top-level cross-site GET, which a Strict cookie would miss.
    setCookie(
      c,
      OIDC_COOKIE,
      services.sessions.seal('oidc', { ...pending, next: inside(c.req.query('next')) }, expiresAt),
      { httpOnly: true, sameSite: 'Lax', secure: secure(c), path: cookiePath, maxAge: OIDC_FLOW_MS / 1000 },
    );
    return c.redirect(authorizationUrl.href, 303);
  });

  routes.get('/login/callback', async (c) => {
    if (!options.oidc) throw new ConsoleError('not_found', 'single sign-on is not configured');
    const pending = services.sessions.open('oidc', getCookie(c, OIDC_COOKIE));
    deleteCookie(c, OIDC_COOKIE, { path: cookiePath });
    if (!pending?.state || !pending.nonce || !pending.verifier || !pending.redirect) {
      throw new ConsoleError(
        'oidc_failed',
        'this sign-in was not started here or took longer than 10 minutes: sign in again',
      );
    }
    const search = new URL(c.req.url).search;
    const pendingFlow = {
      state: pending.state,
      nonce: pending.nonce,
      verifier: pending.verifier,
      redirect: pending.redirect,
    };
    const identity = await options.oidc.finish(pendingFlow, search);
    if (!identity.role) {
      const unverified = options.oidc.roleClaim === 'email' ? identity.unverifiedEmail : undefined;
      const reason = unverified ? 'email_unverified' : 'no_role';
      await run(
        services.pool,
        auditLog.insertAudit(
          { actor: identity.actor, method: 'oidc', address: address(c) },
          {
            action: 'login_refused',
            target: null,
            details: {
              reason,
              subject: identity.subject,
              values: identity.values,
              ...(identity.unverifiedEmail ? { unverifiedEmail: identity.unverifiedEmail } : {}),
            },
          },
        ),
      );
      throw unverified
        ? new ConsoleError(
            'email_unverified',
            `${options.oidc.name} has not verified the address ${unverified}, and the console's roles are mapped ` +
              'from verified addresses only: verify it at the identity provider, or ask an admin for a role by group',
          )
        : new ConsoleError(
            'no_role',
            `${identity.actor} is signed in at ${options.oidc.name}, but none of their groups ` +
              `(${identity.values.join(', ') || 'none'}) has a role in this console: ask an admin to map one in OIDC_ROLES`,
          );
    }
    await startSession(
      c,
      {
        who: identity.actor,
        role: identity.role,
        method: 'oidc',
        ...(identity.groups === null ? {} : { groups: identity.groups }),
      },
      { subject: identity.subject, ...(identity.groups === null ? {} : { groups: identity.groups }) },
    );
    // A page, not a redirect: the session cookie is SameSite=Strict, and a browser leaves it off every request of a
    // redirect chain that began on the provider's site. The next page is then asked for from the console itself.
    return c.html(landingPage(pending.next ?? `${services.base}/`));
  });

  routes.post('/login', async (c) => {
    if (!options.breakGlass) throw new ConsoleError('not_found', 'the break-glass sign-in is not configured');
    const form = await c.req.parseBody();
    const text = (key: string) => (typeof form[key] === 'string' ? form[key] : '');
    const nonce = getCookie(c, LOGIN_COOKIE);
    if (!nonce || !sameBytes(nonce, text('_nonce'))) {
      throw new ConsoleError(
        'csrf_failed',
        'the login form is stale or was not sent by the console: reload it',
      );
    }
    const from = address(c);
    const actor = `${BREAK_GLASS}@${from ?? 'unknown'}`;
    // What the operator typed is a note in the audit row's details, never the actor.
    const note = text('note').trim().slice(0, 200);
    const right = services.sessions.tokenMatches(text('token'));
    const verdict = right
      ? await options.throttle.accepted(from, BREAK_GLASS)
      : await options.throttle.refused(from, BREAK_GLASS);
    if (!verdict.allowed) {
      if (services.sampleRefusal('console_login_throttled')) {
        services.logger.warn({ remoteAddress: from }, 'console login throttled');
      }
      c.header('Retry-After', String(verdict.retryAfterSeconds));
      throw new ConsoleError(
        'too_many_attempts',
        `too many refused sign-ins: try again in ${Math.ceil(verdict.retryAfterSeconds / 60)} min`,
      );
    }
    if (!right) {
      await run(
        services.pool,
        auditLog.insertAudit(
          { actor, method: 'break_glass', address: from },
          {
            action: 'login_refused',
            target: null,
            details: { reason: 'wrong_token', ...(note ? { note } : {}) },
          },
        ),
      );
      if (services.sampleRefusal('console_login_refused')) {
        services.logger.warn({ remoteAddress: from }, 'console login refused: wrong admin token');
      }
      c.status(401);
      return c.html(
        loginPage(services.base, options, {
          nonce,
          next: text('next'),
          error: 'That is not the admin token.',
        }),
      );
    }
    await startSession(c, { who: actor, role: 'admin', method: 'break_glass' }, note ? { note } : {});
    deleteCookie(c, LOGIN_COOKIE, { path: cookiePath });
    return c.redirect(inside(text('next')), 303);
  });

  return routes;
}

interface LoginForm {
  nonce: string;
  next: string;
  notice?: string | undefined;
  error?: string;
}

function loginPage(base: string, options: AuthRoutesOptions, { nonce, next, notice, error }: LoginForm) {
  const sso = options.oidc;
  return layout({
    base,
    title: 'Sign in',
    body: html`<section class="login">
      <h1>Sign in to the console</h1>
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      ${
        sso
          ? html`<p>
              <a class="button" id="sso" href="${base}/login/oidc?${new URLSearchParams({ next })}"
                >Sign in with ${sso.name}</a
              >
            </p>`
          : ''
      }
      ${
        options.breakGlass
          ? html`<details ${sso ? '' : 'open'}>
              <summary>Break-glass: the admin token</summary>
              <p class="hint">
                For when single sign-on is down. You act as <code>admin</code>; the audit log records
                <code>break-glass</code> and your address.
              </p>
              <form method="post" action="${base}/login">
                <input type="hidden" name="_nonce" value="${nonce}" />
                <input type="hidden" name="next" value="${next}" />
                <label for="token">Admin token</label>
                <input id="token" name="token" type="password" autocomplete="current-password" required />
                <label for="note">Why <small>(kept with the sign-in in the audit log)</small></label>
                <input id="note" name="note" maxlength="200" />
                <button type="submit">Sign in with the admin token</button>
              </form>
            </details>`
          : ''
      }
    </section>`,
  });
}

function landingPage(next: string) {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="refresh" content="0;url=${next}" />
        <title>Signed in · webhook-inbox console</title>
      </head>
      <body>
        <p>Signed in. <a href="${next}">Continue to the console</a>.</p>
      </body>
    </html>`;
}
