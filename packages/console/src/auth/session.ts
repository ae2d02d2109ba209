import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isRole, type AuthMethod, type Role } from '@webhook-inbox/operator/access/roles';

/**
 * Console sessions without a table: the cookie holds `{ id, who, role, method, groups, exp }` and an HMAC over it. The key
 * is derived from every secret the console is given (`CONSOLE_SESSION_SECRET`, the admin token, the OpenID Connect
 * client secret), so it never rests on the admin token alone once single sign-on is configured, and rotating any
 * of them ends every session at once. A forged, altered or expired cookie is refused. The CSRF token of a session is
 * another HMAC of its id (a synchronizer token that needs no storage): pages embed it, every state-changing request
 * must send it back. `seal`/`open` sign the short-lived cookie of a sign-in in progress with the same key.
 */

export interface Session {
  /** Random, 128 bits; names the session in the audit log. */
  id: string;
  /** The audit actor: the identity provider's verified email or subject, or `break-glass@<address>`; never typed. */
  who: string;
  role: Role;
  method: AuthMethod;
  /** The consumer groups the session is limited to (its role's `@groups` in `OIDC_ROLES`); absent: every group. */
  groups?: readonly string[];
  /** Epoch milliseconds. */
  expiresAt: number;
}

export type SessionIdentity = Pick<Session, 'who' | 'role' | 'method' | 'groups'>;

export interface Sessions {
  /** True when `presented` is the admin token (constant time, whatever the lengths); false without one. */
  tokenMatches(presented: string): boolean;
  issue(identity: SessionIdentity): { session: Session; cookie: string };
  /** The session a cookie carries, or why there is none. */
  read(cookie: string | undefined): { session: Session } | { refused: 'missing' | 'invalid' | 'expired' };
  csrfToken(session: Session): string;
  csrfMatches(session: Session, presented: string | undefined): boolean;
  /** `value` as a signed cookie for `purpose`, valid until `expiresAt` (epoch ms). */
  seal(purpose: string, value: Record<string, string>, expiresAt: number): string;
  /** What `seal` signed for `purpose`, or undefined when the cookie is missing, altered or expired. */
  open(purpose: string, cookie: string | undefined): Record<string, string> | undefined;
}

/** The secrets the session key is derived from; at least one must be set. */
export interface SessionSecrets {
  /** `CONSOLE_SESSION_SECRET`: a key of its own, so no other secret's rotation ends the sessions. */
  sessionSecret?: string | undefined;
  /** The break-glass token; also what `tokenMatches` compares with. */
  adminToken?: string | undefined;
  /** The OpenID Connect client secret. */
  clientSecret?: string | undefined;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

function sameBytes(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** The session key: an HMAC over every configured secret, each length-prefixed so no two sets collide. */
function sessionKey(secrets: SessionSecrets): Buffer {
  const parts = [secrets.sessionSecret, secrets.adminToken, secrets.clientSecret];
  if (parts.every((part) => !part)) throw new RangeError('the console needs a secret to sign its sessions');
  const material = parts.map((part) => `${(part ?? '').length}:${part ?? ''}`).join('\n');
  return createHmac('sha256', material).update('webhook-inbox console session v2').digest();
}

export function createSessions(options: SessionSecrets & { ttlMs: number; now: () => number }): Sessions {
  const expected = options.adminToken ? sha256(options.adminToken) : undefined;
  const key = sessionKey(options);
  const mac = (purpose: string, value: string) =>
    createHmac('sha256', key).update(`${purpose}\n${value}`).digest('base64url');
  const sign = (purpose: string, value: unknown) => {
    const body = Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${body}.${mac(purpose, body)}`;
  };
  const verify = (purpose: string, cookie: string): unknown => {
    const [body, signature, extra] = cookie.split('.');
    if (!body || !signature || extra !== undefined || !sameBytes(signature, mac(purpose, body))) {
      return undefined;
    }
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
  };

  return {
    // Without an admin token the comparison still runs, against a value no one can present (a fresh random one).
    tokenMatches: (presented) =>
      timingSafeEqual(sha256(presented), expected ?? randomBytes(32)) && expected !== undefined,
    issue(identity) {
      const session: Session = {
        id: randomBytes(16).toString('base64url'),
        ...identity,
        expiresAt: options.now() + options.ttlMs,
      };
      return { session, cookie: sign('session', session) };
    },
    read(cookie) {
      if (!cookie) return { refused: 'missing' };
      const session = parseSession(verify('session', cookie));
      if (!session) return { refused: 'invalid' };
      if (session.expiresAt <= options.now()) return { refused: 'expired' };
      return { session };
    },
    csrfToken: (session) => mac('csrf', session.id),
    csrfMatches: (session, presented) =>
      presented !== undefined && presented !== '' && sameBytes(presented, mac('csrf', session.id)),
    seal: (purpose, value, expiresAt) => sign(purpose, { ...value, exp: expiresAt }),
    open(purpose, cookie) {
      const value = cookie ? verify(purpose, cookie) : undefined;
      if (typeof value !== 'object' || value === null || !('exp' in value)) return undefined;
      const { exp, ...rest } = value as Record<string, unknown>;
      if (typeof exp !== 'number' || exp <= options.now()) return undefined;
      const entries = Object.entries(rest);
      if (!entries.every(([, v]) => typeof v === 'string')) return undefined;
      return Object.fromEntries(entries) as Record<string, string>;
    },
  };
}

const METHODS: readonly string[] = ['oidc', 'break_glass', 'api_token', 'local_cli', 'system'];

function parseSession(value: unknown): Session | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (
    typeof v.id === 'string' &&
    typeof v.who === 'string' &&
    isRole(v.role) &&
    typeof v.method === 'string' &&
    METHODS.includes(v.method) &&
    typeof v.expiresAt === 'number' &&
    (v.groups === undefined ||
      (Array.isArray(v.groups) && v.groups.every((group) => typeof group === 'string')))
  ) {
    return {
      id: v.id,
      who: v.who,
      role: v.role,
      method: v.method as AuthMethod,
      ...(v.groups === undefined ? {} : { groups: v.groups }),
      expiresAt: v.expiresAt,
    };
  }
  return undefined;
}

/** A random value for the login form's double-submit cookie (there is no session yet to derive one from). */
export function loginNonce(): string {
  return randomBytes(16).toString('base64url');
}

export { sameBytes };
