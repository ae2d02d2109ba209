import type { Statement } from '@webhook-inbox/inbox/sql';

/**
 * Statements on `failure_count_deltas` and `failure_counts`: the failing `effect_runs` rows counted per provider,
 * event type, effect, fingerprint and event state, which the failure groups read instead of the rows (migration
 * 0013's triggers append a `+1`/`-1` per change of a failing row; the schema says why append-only).
 */

const KEY = 'provider, event_type, effect, fingerprint, event_state';

/**
 * The failing rows per key, `n` > 0: the folded totals plus the deltas not folded yet, read in one snapshot, so a
 * fold running meanwhile is seen whole or not at all. `where` narrows both (`effect = $1 and fingerprint = $2`).
 */
export function countsSql(where = 'true'): string {
  return `
    select ${KEY}, sum(n)::int as n
      from (select ${KEY}, n from failure_counts where ${where}
            union all
            select ${KEY}, n from failure_count_deltas where ${where}) c
     group by ${KEY}
    having sum(n) > 0`;
}

/**
 * Folds up to `limit` deltas into the totals (`foldFailureCounts` runs it in its transaction, holding the fold's
 * lock): the deltas taken are deleted and their sums added to their keys, in key order. Answers how many it took.
 */
export function foldDeltas(limit: number): Statement {
  return {
    text: `
      with taken as (
        delete from failure_count_deltas
         where id in (select id from failure_count_deltas order by id limit $1)
        returning ${KEY}, n
      ),
      folded as (
        insert into failure_counts as c (${KEY}, n)
        select ${KEY}, sum(n)::int from taken group by ${KEY} order by ${KEY}
        on conflict on constraint failure_counts_key do update set n = c.n + excluded.n
      )
      select count(*)::int as taken from taken`,
    values: [limit],
  };
}

/** The keys folded to zero (their failures replayed, settled or purged): nothing left to count. */
export function deleteEmptyCounts(): Statement {
  return { text: `delete from failure_counts where n = 0`, values: [] };
}

/** One fold at a time (a transaction-scoped advisory lock; false: another process is folding). */
export function tryFoldLock(): Statement {
  return {
    text: `select pg_try_advisory_xact_lock(hashtext('webhook_inbox_failure_counts_fold')) as locked`,
    values: [],
  };
}
