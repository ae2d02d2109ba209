import { countMinutesBefore, deleteMinutesBefore } from './per-minute.ts';
import type { Statement } from '@webhook-inbox/inbox/sql';

/**
 * Statements on `webhook_delivery_counts` (webhook requests per minute, provider and outcome): the receiver's
 * flush, the console's overview, retention.
 */

/** One row of a flush: requests answered in `minute` with this provider, outcome and HTTP status. */
export interface DeliveryCount {
  minute: Date;
  provider: string;
  outcome: string;
  httpStatus: number;
  count: number;
}

/**
 * The receiver's flush: adds its counts to the rows of their minutes, creating the missing ones, in one
 * statement however many rows. Every receiver adds to the same rows, so the sum is the fleet's. Rows are sent
 * sorted by key, so two receivers flushing the same minutes wait for each other in one order (no deadlock).
 * Named: its parameters are five arrays whatever the number of rows.
 */
export function addDeliveryCounts(counts: readonly DeliveryCount[]): Statement {
  const rows = [...counts].sort(
    (a, b) =>
      a.minute.getTime() - b.minute.getTime() ||
      compare(a.provider, b.provider) ||
      compare(a.outcome, b.outcome),
  );
  return {
    name: 'webhook_inbox_add_delivery_counts',
    text: `
      insert into webhook_delivery_counts (minute, provider, outcome, http_status, count)
      select * from unnest($1::timestamptz[], $2::text[], $3::text[], $4::int[], $5::bigint[])
      on conflict (minute, provider, outcome) do update
        set count = webhook_delivery_counts.count + excluded.count`,
    values: [
      rows.map((r) => r.minute),
      rows.map((r) => r.provider),
      rows.map((r) => r.outcome),
      rows.map((r) => r.httpStatus),
      rows.map((r) => r.count),
    ],
  };
}

/**
 * Webhook requests per bucket of `bucketSeconds` since `since`, by kind: `accepted`, `duplicate`, `refused` (a 4xx:
 * the request can never succeed), `not recorded` (a 5xx: the provider retries). Reads the primary key's range (a
 * minute first).
 */
export function countPerBucket(since: Date, bucketSeconds: number): Statement {
  return {
    text: `select date_bin($2 * interval '1 second', minute, $1) as bucket,
                  case when http_status < 300 then outcome
                       when http_status < 500 then 'refused'
                       else 'not recorded' end as kind,
                  sum(count)::int as n
             from webhook_delivery_counts where minute >= $1
            group by 1, 2 order by 1`,
    values: [since, bucketSeconds],
  };
}

/** Retention: a batch of rows older than `before` (see `deleteMinutesBefore`). */
export function deleteDeliveryCounts(before: Date, from: string, limit: number): Statement {
  return deleteMinutesBefore('webhook_delivery_counts', before, from, limit);
}

/** Retention's dry run: the rows a purge would delete. */
export function countDeliveryCountsBefore(before: Date): Statement {
  return countMinutesBefore('webhook_delivery_counts', before);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
