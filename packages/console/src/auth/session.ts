import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Console sessions without a table: the cookie holds `{ id, who, exp }` and an HMAC over it, keyed by a key
 * derived from the admin token. A forged, altered or expired cookie is refused; rotating the admin token ends
 * every session at once. The CSRF token of a session is another HMAC of its id (a synchronizer token that needs
 * no storage): pages embed it, every state-changing request must send it back.
 */

export interface Session {
  /** Random, 128 bits; names the session in the audit log. */
  id: string;
  /** The name the operator gave at login, for the audit log. */
  who: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface Sessions {
  /** True when `presented` is the admin token (constant time, whatever the lengths). */
  tokenMatches(presented: string): boolean;
  issue(who: string): { session: Session; cookie: string };
  /** The session a cookie carries, or why there is none. */
  read(cookie: string | undefined): { session: Session } | { refused: 'missing' | 'invalid' | 'expired' };
  csrfToken(session: Session): string;
  csrfMatches(session: Session, presented: string | undefined): boolean;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

function sameBytes(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

export function createSessions(options: { adminToken: string; ttlMs: number; now: () => number }): Sessions {
  const expected = sha256(options.adminToken);
  const key = createHmac('sha256', options.adminToken).update('webhook-inbox console session v1').digest();
  const mac = (purpose: string, value: string) =>
    createHmac('sha256', key).update(`${purpose}\n${value}`).digest('base64url');

  return {
    tokenMatches: (presented) => timingSafeEqual(sha256(presented), expected),
    issue(who) {
      const session: Session = {
        id: randomBytes(16).toString('base64url'),
        who,
        expiresAt: options.now() + options.ttlMs,
      };
      const body = Buffer.from(JSON.stringify(session)).toString('base64url');
      return { session, cookie: `${body}.${mac('session', body)}` };
    },
    read(cookie) {
      if (!cookie) return { refused: 'missing' };
      const [body, signature, extra] = cookie.split('.');
      if (!body || !signature || extra !== undefined || !sameBytes(signature, mac('session', body))) {
        return { refused: 'invalid' };
      }
      const session = parseSession(body);
      if (!session) return { refused: 'invalid' };
      if (session.expiresAt <= options.now()) return { refused: 'expired' };
      return { session };
    },
    csrfToken: (session) => mac('csrf', session.id),
    csrfMatches: (session, presented) =>
      presented !== undefined && presented !== '' && sameBytes(presented, mac('csrf', session.id)),
  };
}

function parseSession(body: string): Session | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (
      typeof value === 'object' &&
      value !== null &&
      'id' in value &&
      'who' in value &&
      'expiresAt' in value &&
      typeof value.id === 'string' &&
      typeof value.who === 'string' &&
      typeof value.expiresAt === 'number'
    ) {
      return { id: value.id, who: value.who, expiresAt: value.expiresAt };
    }
  } catch {
    // not a cookie this console wrote
  }
  return undefined;
}

/** A random value for the login form's double-submit cookie (there is no session yet to derive one from). */
export function loginNonce(): string {
  return randomBytes(16).toString('base64url');
}

export { sameBytes };
