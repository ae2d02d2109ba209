import { auditLog } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { Hono } from 'hono';
import type { ConsoleServices } from '../context.ts';
import { remoteAddress } from '../context.ts';
import { run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { layout } from '../views/layout.ts';
import { isHttps, LOGIN_COOKIE, SESSION_COOKIE } from './middleware.ts';
import { loginNonce, sameBytes } from './session.ts';

const REASONS: Record<string, string> = {
  expired: 'Your session has expired. Sign in again.',
  invalid: 'Your session is not valid (the admin token may have changed). Sign in again.',
  signed_out: 'You are signed out.',
};

/**
 * Sign-in with the admin token, sign-out. The login form is protected from cross-site posting by a
 * double-submit nonce (a SameSite=Strict cookie and the same value in the form), as there is no session yet.
 */
export function authRoutes(services: ConsoleServices, sessionTtlMs: number, throttle: LoginThrottle): Hono {
  const routes = new Hono();
  const cookiePath = services.base || '/';

  routes.get('/login', (c) => {
    const nonce = loginNonce();
    setCookie(c, LOGIN_COOKIE, nonce, {
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c),
      path: cookiePath,
      maxAge: 3600,
    });
    const reason = REASONS[c.req.query('why') ?? ''];
    return c.html(loginPage(services.base, { nonce, next: c.req.query('next') ?? '', notice: reason }));
  });

  routes.post('/login', async (c) => {
    const form = await c.req.parseBody();
    const text = (key: string) => (typeof form[key] === 'string' ? form[key] : '');
    const nonce = getCookie(c, LOGIN_COOKIE);
    if (!nonce || !sameBytes(nonce, text('_nonce'))) {
      throw new ConsoleError(
        'csrf_failed',
        'the login form is stale or was not sent by the console: reload it',
      );
    }
    const who = text('who').trim().slice(0, 80);
    const address = remoteAddress(c);
    // Checked before the token, so a throttled address learns nothing, even from the right token.
    const retryAfter = address ? await throttled(services, throttle, address) : 0;
    if (retryAfter > 0) {
      services.logger.warn({ remoteAddress: address }, 'console login throttled');
      c.header('Retry-After', String(retryAfter));
      throw new ConsoleError(
        'too_many_attempts',
        `too many refused sign-ins from your address: try again in ${Math.ceil(retryAfter / 60)} min`,
      );
    }
    if (!services.sessions.tokenMatches(text('token'))) {
      await run(
        services.pool,
        auditLog.insertAudit({ actor: who || 'unknown', address }, { action: 'login_refused', target: null }),
      );
      services.logger.warn({ remoteAddress: address }, 'console login refused: wrong admin token');
      c.status(401);
      return c.html(
        loginPage(services.base, { nonce, next: text('next'), who, error: 'That is not the admin token.' }),
      );
    }
    if (!who) {
      c.status(400);
      return c.html(
        loginPage(services.base, {
          nonce,
          next: text('next'),
          error: 'Give your name: the audit log records it.',
        }),
      );
    }
    const { session, cookie } = services.sessions.issue(who);
    setCookie(c, SESSION_COOKIE, cookie, {
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c),
      path: cookiePath,
      maxAge: Math.floor(sessionTtlMs / 1000),
    });
    deleteCookie(c, LOGIN_COOKIE, { path: cookiePath });
    await run(
      services.pool,
      auditLog.insertAudit(
        { actor: who, role: 'admin', method: 'break_glass', address },
        {
          action: 'login',
          target: null,
          details: { session: session.id.slice(0, 8), expiresAt: new Date(session.expiresAt).toISOString() },
        },
      ),
    );
    const next = text('next');
    // Only a path inside the console: never an open redirect.
    const target =
      next.startsWith(`${services.base}/`) && !next.startsWith('//') ? next : `${services.base}/`;
    return c.redirect(target, 303);
  });

  return routes;
}

/** Refused sign-ins an address may make within `windowMs` (since its last success) before it must wait. */
export interface LoginThrottle {
  maxFailures: number;
  windowMs: number;
}

/** Seconds `address` must wait before its next sign-in, 0 when it may try now. */
async function throttled(
  services: ConsoleServices,
  throttle: LoginThrottle,
  address: string,
): Promise<number> {
  const now = services.now().getTime();
  const [failures] = await run<{ n: number; oldest: Date | null }>(
    services.pool,
    auditLog.recentLoginFailures(address, new Date(now - throttle.windowMs)),
  );
  if (!failures?.oldest || failures.n < throttle.maxFailures) return 0;
  return Math.max(1, Math.ceil((new Date(failures.oldest).getTime() + throttle.windowMs - now) / 1000));
}

interface LoginForm {
  nonce: string;
  next: string;
  /** Kept when the form comes back with an error, so only the token is typed again. */
  who?: string;
  notice?: string;
  error?: string;
}

function loginPage(base: string, { nonce, next, who = '', notice, error }: LoginForm) {
  return layout({
    base,
    title: 'Sign in',
    body: html`<section class="login">
      <h1>Sign in to the console</h1>
      ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form method="post" action="${base}/login">
        <input type="hidden" name="_nonce" value="${nonce}" />
        <input type="hidden" name="next" value="${next}" />
        <label for="who">Your name <small>(recorded in the audit log)</small></label>
        <input id="who" name="who" value="${who}" autocomplete="username" required maxlength="80" />
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
    </section>`,
  });
}
