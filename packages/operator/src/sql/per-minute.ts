import type { Statement } from '@webhook-inbox/inbox/sql';

/** The tables keyed by a `minute` column first, the console overview's history. */
export type PerMinuteTable = 'webhook_delivery_counts' | 'inbox_samples';

/**
 * Retention: deletes up to `limit` rows of `table` of minutes in [`from`, `before`), oldest first (a range of
 * its primary key); answers `n` (rows deleted) and `last` (the last minute deleted, the next batch's `from`), as
 * the event batches do. Nothing locks these rows for long: a receiver adds only to recent minutes.
 */
export function deleteMinutesBefore(
  table: PerMinuteTable,
  before: Date,
  from: string,
  limit: number,
): Statement {
  return {
    text: `
      with batch as (
        delete from ${table}
        where ctid = any(array(
          select ctid from ${table}
          where minute < $1::timestamptz and minute >= $2::timestamptz
          order by minute
          limit $3))
        returning minute)
      select count(*)::int as n, max(minute)::text as last from batch`,
    values: [before, from, limit],
  };
}

/** Retention's dry run: the rows of `table` a purge would delete. */
export function countMinutesBefore(table: PerMinuteTable, before: Date): Statement {
  return { text: `select count(*)::int as n from ${table} where minute < $1`, values: [before] };
}
