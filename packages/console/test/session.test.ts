import { describe, expect, it } from 'vitest';
import { createSessions, type SessionSecrets } from '../src/auth/session.ts';

const identity = { who: 'ada@example.com', role: 'admin', method: 'oidc' } as const;
const sessions = (secrets: SessionSecrets) => createSessions({ ...secrets, ttlMs: 60_000, now: () => 0 });

describe('the session key', () => {
  it('depends on every configured secret: changing the client secret alone ends the sessions', () => {
    const adminToken = 'the-break-glass-token-0123456789';
    const { cookie } = sessions({ adminToken, clientSecret: 'client-secret-a' }).issue(identity);
    expect(sessions({ adminToken, clientSecret: 'client-secret-a' }).read(cookie)).toMatchObject({
      session: identity,
    });
    expect(sessions({ adminToken, clientSecret: 'client-secret-b' }).read(cookie)).toEqual({
      refused: 'invalid',
    });
    expect(sessions({ adminToken }).read(cookie)).toEqual({ refused: 'invalid' });
  });

  it('is its own with CONSOLE_SESSION_SECRET, and no admin token means no break-glass match', () => {
    const own = sessions({ sessionSecret: 'a-session-secret-of-32-characters!!', clientSecret: 'c' });
    expect(own.tokenMatches('')).toBe(false);
    expect(own.tokenMatches('anything-at-all-0123456789')).toBe(false);
    expect(() => sessions({})).toThrow(RangeError);
  });

  it('refuses a signed flow cookie of another purpose or past its expiry', () => {
    const s = sessions({ clientSecret: 'client-secret-a' });
    const sealed = s.seal('oidc', { state: 's' }, 1_000);
    expect(s.open('oidc', sealed)).toEqual({ state: 's' });
    expect(s.open('session', sealed)).toBeUndefined();
    expect(
      createSessions({ clientSecret: 'client-secret-a', ttlMs: 1, now: () => 1_000 }).open('oidc', sealed),
    ).toBeUndefined();
  });
});
