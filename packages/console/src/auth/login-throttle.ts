import { throttleKey } from '@webhook-inbox/operator/access/forwarded';
import { createAuthThrottle, type ThrottleVerdict } from '@webhook-inbox/operator/access/throttle';
import type pg from 'pg';
import { ConsoleError } from '../errors.ts';

/** Refused break-glass sign-ins allowed per window, per client address and per account. */
interface LoginThrottleOptions {
  /** Per address (an IPv6 /64, every loopback address as one). Default 5. */
  maxFailures: number;
  /**
   * Per account, from every address together: a guesser spread over many addresses is stopped too. Default 20. The
   * break-glass token is one account, so this many wrong tokens in a window lock it for everyone until the window
   * ends; sign-ins through the identity provider are not affected.
   */
  accountMaxFailures: number;
  windowMs: number;
}

export interface LoginThrottle {
  /** A wrong secret: counted at the address and the account; allowed (answer 401) while both are within bounds. */
  refused(address: string | null, account: string): Promise<ThrottleVerdict>;
  /** A right secret: refused unchecked (429) while either is past its bound. */
  accepted(address: string | null, account: string): Promise<ThrottleVerdict>;
}

/**
 * The sign-in throttle on `auth_failures` (access/throttle.ts): each refusal is counted and judged in one statement,
 * so 200 concurrent wrong tokens from one address get `maxFailures` checked answers and the rest 429. When its
 * database cannot answer, a sign-in is refused 503 `unavailable` (never let through unthrottled).
 */
export function createLoginThrottle(pool: pg.Pool, options: LoginThrottleOptions): LoginThrottle {
  const windowSeconds = Math.max(1, Math.ceil(options.windowMs / 1000));
  const byAddress = createAuthThrottle(pool, {
    scope: 'console_login',
    maxFailures: options.maxFailures,
    windowSeconds,
  });
  const byAccount = createAuthThrottle(pool, {
    scope: 'console_login_account',
    maxFailures: options.accountMaxFailures,
    windowSeconds,
  });
  const guarded = async (check: () => Promise<ThrottleVerdict>): Promise<ThrottleVerdict> => {
    try {
      return await check();
    } catch (error) {
      throw new ConsoleError(
        'database_unavailable',
        'sign-in is unavailable: the database cannot be reached',
        {
          cause: error,
        },
      );
    }
  };
  return {
    // The account counts only what the address was allowed to try: one address cannot use up the account's
    // allowance and lock everyone else out.
    refused: (address, account) =>
      guarded(async () => {
        const verdict = await byAddress.refused(throttleKey(address));
        return verdict.allowed ? byAccount.refused(account) : verdict;
      }),
    accepted: (address, account) =>
      guarded(async () => {
        const verdict = await byAddress.accepted(throttleKey(address));
        return verdict.allowed ? byAccount.accepted(account) : verdict;
      }),
  };
}
