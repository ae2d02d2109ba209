import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  NO_TRUSTED_PROXIES,
  requestOrigin,
  throttleKey,
  type RequestOrigin,
  type TrustedProxies,
} from '@webhook-inbox/operator/access/forwarded';
import { can, type Permission, type Principal } from '@webhook-inbox/operator/access/roles';
import { createAuthThrottle, type AuthThrottle } from '@webhook-inbox/operator/access/throttle';
import { findApiToken, tokenPrincipal, TokenError } from '@webhook-inbox/operator/access/tokens';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { timingSafeEqual } from 'hono/utils/buffer';
import type pg from 'pg';
import { AdminError, ThrottledError } from '../http/errors.ts';
import { createLogSampler, type Logger, type LogSampler } from '../logger.ts';

/** Refused bearer tokens one client may send in a window before every attempt is refused (429) until it ends. */
export const ADMIN_THROTTLE = { scope: 'admin_api', maxFailures: 10, windowSeconds: 15 * 60 } as const;
/** A refusal of each kind is logged at once, then one line per window says how many more there were. */
export const REFUSAL_LOG_WINDOW_MS = 60_000;

/** Who may try the admin API's token how often, where requests come from, and how refusals are logged. */
export interface AdminAccess {
  throttle: AuthThrottle;
  trustedProxies: TrustedProxies;
  /** The admin API's refusal lines. */
  refusals: LogSampler;
  /** Writes the last window's count of suppressed refusals. */
  close(): void;
}

/**
 * The receiver's admin access, shared by whichever listener serves `/admin/*`: the throttle's count lives in
 * PostgreSQL (`auth_failures`), so every receiver on the database shares it.
 */
export function createAdminAccess(deps: {
  pool: pg.Pool;
  logger: Logger;
  trustedProxies?: TrustedProxies;
}): AdminAccess {
  const refusals = createLogSampler(deps.logger, { perWindow: 1, windowMs: REFUSAL_LOG_WINDOW_MS });
  return {
    throttle: createAuthThrottle(deps.pool, ADMIN_THROTTLE),
    trustedProxies: deps.trustedProxies ?? NO_TRUSTED_PROXIES,
    refusals,
    close: () => refusals.close(),
  };
}

/**
 * The client's address and scheme (forwarded.ts): from the socket, and from the forwarding headers when the socket's
 * peer is in `TRUSTED_PROXIES`. Without a socket (`app.request()` in tests), the address is unknown.
 */
export function originOf(c: Context, trustedProxies: TrustedProxies): RequestOrigin {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return requestOrigin(
    {
      remoteAddress: incoming?.socket.remoteAddress,
      encrypted: Boolean((incoming?.socket as TLSSocket | undefined)?.encrypted),
      header: (name) => {
        const value = incoming ? incoming.headers[name] : c.req.header(name);
        return Array.isArray(value) ? value.join(', ') : value;
      },
    },
    trustedProxies,
  );
}

/** The Hono variables the admin routes read: who is asking (`adminPrincipal`). */
export type AdminEnv = { Variables: { principal: Principal } };

/** The break-glass principal: the `ADMIN_TOKEN`, always admin of every group, audited as such. */
export function breakGlass(address: string | null): Principal {
  return { actor: 'break-glass', role: 'admin', method: 'break_glass', groups: null, address };
}

/**
 * `Authorization: Bearer <token>`: the `ADMIN_TOKEN` (compared in constant time, the SHA-256 of both) is the
 * break-glass admin; any other is looked up as an API token by its hash (tokens.ts) and acts as its role and groups.
 * The principal is set as `principal` for the routes. Under the throttle: a wrong, expired or revoked token is
 * counted and answered 401 (`unauthorized`, `token_expired`, `token_revoked`) while its client is within
 * `ADMIN_THROTTLE.maxFailures`, then 429 `too_many_attempts` with `Retry-After`; a throttled client's right token is
 * refused the same way, so guesses past the limit teach nothing. A missing or malformed header (401, 400) guesses
 * nothing and is not counted.
 */
export function adminPrincipal(
  token: string,
  pool: pg.Pool,
  access: Pick<AdminAccess, 'throttle' | 'trustedProxies'>,
): MiddlewareHandler<AdminEnv> {
  return bearerAuth({
    verifyToken: async (presented, c) => {
      const address = originOf(c, access.trustedProxies).address;
      const client = throttleKey(address);
      let principal: Principal | undefined;
      let refusal: TokenError | undefined;
      if (await timingSafeEqual(token, presented)) {
        principal = breakGlass(address);
      } else {
        try {
          const row = await findApiToken(pool, presented);
          if (row) principal = tokenPrincipal(row, address);
        } catch (error) {
          if (!(error instanceof TokenError)) throw error;
          refusal = error;
        }
      }
      const verdict = principal
        ? await access.throttle.accepted(client)
        : await access.throttle.refused(client);
      if (!verdict.allowed) throw new ThrottledError(verdict.retryAfterSeconds);
      if (refusal) throw refusal;
      if (principal) c.set('principal', principal);
      return principal !== undefined;
    },
  });
}

/** Refuses (403 `forbidden`, naming the permission) a principal whose role lacks `permission`. */
export function requirePermission(principal: Principal, permission: Permission): void {
  if (!can(principal.role, permission)) {
    throw new AdminError('forbidden', `role ${principal.role} lacks permission ${permission}`);
  }
}
