import type pg from 'pg';
import { authFailures } from '../sql/index.ts';

export interface AuthThrottleOptions {
  /** What is being tried, e.g. `admin_api`: each scope counts apart. */
  scope: string;
  /** Refused attempts a client may make in a window; the next attempt, right or wrong, is refused unchecked. */
  maxFailures: number;
  /** How long a window lasts from its first refusal. */
  windowSeconds: number;
}

/** The answer for one attempt: go on, or refuse it (429) and say when to come back. */
export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface AuthThrottle {
  /**
   * A wrong secret from `client`: counted, and `allowed` while within the limit (answer it as refused, 401);
   * past the limit, throttled (429).
   */
  refused(client: string): Promise<ThrottleVerdict>;
  /** A right secret from `client`: throttled when the client has used up its refusals, else allowed. */
  accepted(client: string): Promise<ThrottleVerdict>;
}

/**
 * Throttles guesses of a secret per client, in PostgreSQL (`auth_failures`) so every receiver shares the count.
 * The count and the refusal are one statement (`countFailure`): 200 concurrent wrong secrets from one client get
 * exactly `maxFailures` checked answers, the rest are throttled. A throttled client gets the same answer whether its
 * secret is right or wrong, so throttled guesses teach it nothing. `client` is a key from `throttleKey`
 * (forwarded.ts), so an IPv6 /64 or the loopback addresses count as one.
 *
 * @example
 * const throttle = createAuthThrottle(pool, { scope: 'admin_api', maxFailures: 10, windowSeconds: 900 });
 * const verdict = tokenMatches ? await throttle.accepted(key) : await throttle.refused(key);
 */
export function createAuthThrottle(pool: pg.Pool, options: AuthThrottleOptions): AuthThrottle {
  const { scope, maxFailures } = options;
  return {
    async refused(client) {
      const { rows } = await pool.query<authFailures.FailureCountRow>(
        authFailures.countFailure(scope, client, options),
      );
      const row = rows[0]!;
      // A window opened: the ended ones of every client go.
      if (row.failures === 1) await pool.query(authFailures.deleteEnded());
      return row.allowed ? { allowed: true } : { allowed: false, retryAfterSeconds: row.retryAfterSeconds };
    },
    async accepted(client) {
      const { rows } = await pool.query<authFailures.FailureStateRow>(
        authFailures.readFailures(scope, client, maxFailures),
      );
      const row = rows[0];
      return row?.throttled
        ? { allowed: false, retryAfterSeconds: row.retryAfterSeconds }
        : { allowed: true };
    },
  };
}
