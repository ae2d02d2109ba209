import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  requestOrigin,
  type RequestOrigin,
  type TrustedProxies,
} from '@webhook-inbox/operator/access/forwarded';
import { can, type Permission, type Principal, type Role } from '@webhook-inbox/operator/access/roles';
import { NAV } from './views/layout.ts';
import type { EffectLookup } from '@webhook-inbox/inbox/effect-routes';
import { auditLog } from '@webhook-inbox/operator/sql';
import type { Context, Hono } from 'hono';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Session, Sessions } from './auth/session.ts';
import { run } from './db.ts';

/** Per request: the session, its CSRF token, and the principal it acts as (what the audit log records). */
export type ConsoleEnv = { Variables: { session: Session; csrf: string; principal: Principal } };
export type ConsoleApp = Hono<ConsoleEnv>;
export type ConsoleContext = Context<ConsoleEnv>;

/** The permission each navigation section needs beyond `read` (`app.ts` guards its routes with the same). */
const SECTION_PERMISSIONS: Readonly<Record<string, Permission>> = { tokens: 'manage_tokens' };

/**
 * What a signed-in page's layout shows and sends: the operator's name, the request's CSRF token, and the sections
 * the role may open.
 */
export function pageSession(c: ConsoleContext): { who: string; csrf: string; sections: string[] } {
  const { role } = c.get('principal');
  const sections = NAV.map(([key]) => key as string).filter((key) =>
    can(role, SECTION_PERMISSIONS[key] ?? 'read'),
  );
  return { who: c.get('session').who, csrf: c.get('csrf'), sections };
}

/** What every page handler gets: dependencies and the few services the console itself provides. */
export interface ConsoleServices {
  pool: pg.Pool;
  boss: PgBoss;
  logger: Logger;
  /**
   * The effects registered per event type in a consumer group (default: the default group), for a replay's plan:
   * `undefined` when none are known.
   */
  effectsFor: (group?: string) => Promise<EffectLookup | undefined>;
  /** Where the app is mounted, e.g. `/console`; every link starts with it. */
  base: string;
  now: () => Date;
  sessions: Sessions;
  /** Peers whose `X-Forwarded-For`/`-Proto` are believed (`TRUSTED_PROXIES`): the client's address and scheme. */
  trustedProxies: TrustedProxies;
  queryTimeoutMs: number;
  /** True when a refusal of this kind may be logged (the receiver samples them: one a minute per kind). */
  sampleRefusal: (kind: string) => boolean;
  /** The roles that see subjects and error texts masked (`masking.ts`). */
  maskedRoles: readonly Role[];
  /** The provider names whose event ids the search matches in any case; undefined: the caseless types. */
  caselessIdProviders: readonly string[] | undefined;
  /** Tells this process's operations runner that an operation is waiting (it also polls). */
  wakeRunner: () => void;
}

/**
 * The client's address and scheme: the socket's, or what a trusted proxy forwarded (forwarded.ts). Without a socket
 * (`app.request()`), the address is unknown and the scheme is the request URL's.
 */
export function originOf(c: Context, trustedProxies: TrustedProxies): RequestOrigin {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) {
    return { address: null, scheme: new URL(c.req.url).protocol === 'https:' ? 'https' : 'http' };
  }
  return requestOrigin(
    {
      remoteAddress: incoming.socket.remoteAddress,
      encrypted: Boolean((incoming.socket as TLSSocket).encrypted),
      header: (name) => {
        const value = incoming.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
    },
    trustedProxies,
  );
}

/** The console's own origin as the browser sees it: the client's scheme and the `Host` it asked for. */
export function consoleOrigin(c: Context, trustedProxies: TrustedProxies): string {
  const url = new URL(c.req.url);
  return `${originOf(c, trustedProxies).scheme}://${url.host}`;
}

/**
 * Writes one audit row for an action of the request's principal: its verified actor, and its role and sign-in
 * method in the details; `group`, the consumer group of what it acted on (`AuditAction.group`).
 */
export async function audit(
  services: ConsoleServices,
  c: ConsoleContext,
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
  group?: string,
): Promise<void> {
  const session = c.get('session');
  const principal = c.get('principal');
  await run(
    services.pool,
    auditLog.insertAudit(principal, {
      action,
      target,
      details: { ...details, session: session.id.slice(0, 8) },
      group,
    }),
  );
}
