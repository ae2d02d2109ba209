import type { Statement } from '@webhook-inbox/inbox/sql';

/**
 * Statements on `auth_failures`: refused authentication attempts per (scope, client) in a fixed window that opens
 * at the first refusal. Any surface that checks a secret can throttle with them (the admin API's bearer token as
 * scope `admin_api`; a sign-in form under its own scope, per address and per account as separate clients).
 */

export interface FailureCountRow {
  /** Refusals of this client in its window, this one included (capped just past the limit). */
  failures: number;
  /** False once the client is past `maxFailures`: this attempt is refused unchecked. */
  allowed: boolean;
  /** Seconds until the window ends (at least 1): the `Retry-After` of a refusal. */
  retryAfterSeconds: number;
}

/**
 * Counts one refused attempt and answers whether it was within `maxFailures`, in one statement: concurrent
 * attempts of one client take the row's lock in turn (`ON CONFLICT DO UPDATE` sees the latest count), so however
 * many arrive at once, exactly `maxFailures` of them are allowed in a window. A window that has ended starts
 * again at 1. The count stops one past the limit (it only needs to say "past it").
 */
export function countFailure(
  scope: string,
  client: string,
  { maxFailures, windowSeconds }: { maxFailures: number; windowSeconds: number },
): Statement {
  return {
    name: 'webhook_inbox_count_auth_failure',
    text: `
      insert into auth_failures as f (scope, client, failures, resets_at)
      values ($1, $2, 1, statement_timestamp() + make_interval(secs => $3))
      on conflict (scope, client) do update
         set failures = case when f.resets_at <= statement_timestamp() then 1
                             else least(f.failures + 1, $4 + 1) end,
             resets_at = case when f.resets_at <= statement_timestamp() then excluded.resets_at
                              else f.resets_at end
      returning failures, failures <= $4 as allowed,
                greatest(1, ceil(extract(epoch from resets_at - statement_timestamp())))::int as "retryAfterSeconds"`,
    values: [scope, client, windowSeconds, maxFailures],
  };
}

export interface FailureStateRow {
  /** True when the client has used up its `maxFailures` in its window: even a right secret is refused. */
  throttled: boolean;
  retryAfterSeconds: number;
}

/** A client's state before a right secret is accepted: no row while it has no refusal in an open window. */
export function readFailures(scope: string, client: string, maxFailures: number): Statement {
  return {
    name: 'webhook_inbox_read_auth_failures',
    text: `
      select failures >= $3 as throttled,
             greatest(1, ceil(extract(epoch from resets_at - statement_timestamp())))::int as "retryAfterSeconds"
        from auth_failures
       where scope = $1 and client = $2 and resets_at > statement_timestamp()`,
    values: [scope, client, maxFailures],
  };
}

/** Rows whose window has ended (they count for nothing): run when a window opens, so the table stays small. */
export function deleteEnded(): Statement {
  return { text: 'delete from auth_failures where resets_at <= statement_timestamp()', values: [] };
}
