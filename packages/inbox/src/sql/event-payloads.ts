import { PENDING_STATUSES, sqlList } from '@webhook-inbox/db/statuses';
import type { EventKey } from '../event-key.ts';
import type { Statement } from './statement.ts';

/**
 * Statements on `webhook_event_payloads` and its partitions, one per UTC day of `received_at`, named
 * `webhook_event_payloads_pYYYYMMDD`. The receiver writes payloads with its insert (`webhook-events.ts`); what is
 * here keeps the partitions: created ahead, dropped whole once expired.
 *
 * A table's name cannot be a parameter, so the statements that read a partition by name splice it into the text:
 * every name comes from `partitionName` (a date, digits only) or from the catalog by way of `partitionDay`, which
 * accepts only those. The DDL is migration 0014's functions', which check the names they are given themselves.
 */

const PAYLOADS_TABLE = 'webhook_event_payloads';
const PREFIX = `${PAYLOADS_TABLE}_p`;

/**
 * The one way to an event's payload: `select` (over `p`, its payload row) from the partition of its day, reached by
 * the event row `events`' key and `received_at` (one primary-key probe). A scalar subquery: null when retention
 * purged the payload, and as a condition (`p.payload @> ...`) false then.
 *
 * @example
 * `select e.provider, ${payloadOf('e', 'p.payload::text')} as payload from webhook_events e`
 */
export function payloadOf(events: string, select: string): string {
  return `(select ${select} from ${PAYLOADS_TABLE} p
            where p.provider = ${events}.provider and p.event_id = ${events}.event_id
              and p.received_at = ${events}.received_at)`;
}

/** The partition that holds the payloads received on `day`'s UTC date. */
export function partitionName(day: Date): string {
  return PREFIX + day.toISOString().slice(0, 10).replaceAll('-', '');
}

/** The UTC day a partition name stands for, or null for a table this module did not name. */
export function partitionDay(name: string): Date | null {
  const match = /^webhook_event_payloads_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  if (!match) return null;
  const day = new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`);
  return Number.isNaN(day.getTime()) ? null : day;
}

export interface PartitionRow {
  name: string;
  /** Left by a `DETACH ... CONCURRENTLY` that was interrupted: it must be finalized before anything else. */
  detachPending: boolean;
}

/** The table's partitions (including any not named by `partitionName`, which callers leave alone). */
export function selectPartitions(): Statement {
  return {
    text: `
      select c.relname as name, i.inhdetachpending as "detachPending"
        from pg_inherits i
        join pg_class c on c.oid = i.inhrelid
       where i.inhparent = to_regclass('${PAYLOADS_TABLE}')
       order by c.relname`,
    values: [],
  };
}

/**
 * Creates the partitions of `days` (UTC dates, `YYYY-MM-DD`) that do not exist, answering one row per day with
 * `created`. `webhook_inbox_create_payload_partition` (migration 0006) creates a plain table and attaches it, which
 * never blocks the receiver (see the function), and makes concurrent callers take turns on a transaction-scoped
 * lock, so two workers starting at once create each partition once.
 */
export function createPartitions(days: readonly string[]): Statement {
  return {
    text: `
      select to_char(day, 'YYYY-MM-DD') as day, webhook_inbox_create_payload_partition(day) as created
        from unnest($1::date[]) as day
       order by day`,
    values: [days],
  };
}

/**
 * Whether any event received in [`from`, `to`) still has work to do (received, processing, failed) in the default
 * group or in any other: its worker will read the payload, so that day's partition is not dropped. One probe of
 * `webhook_events_status_received_at_idx` per status, and the other groups' unfinished rows (their partial index)
 * each looked up by key.
 */
export function hasUnfinishedEvents(from: Date, to: Date): Statement {
  return {
    text: `
      select exists (
        select from webhook_events
         where status in ${sqlList(PENDING_STATUSES)} and received_at >= $1 and received_at < $2
      ) or exists (
        select from webhook_event_groups g
          join webhook_events e on e.provider = g.provider and e.event_id = g.event_id
         where g.status in ${sqlList(PENDING_STATUSES)} and e.received_at >= $1 and e.received_at < $2
      ) as unfinished`,
    values: [from, to],
  };
}

/** A partition's bytes on disk (table, TOAST, index): what dropping it frees. */
export function partitionBytes(name: string): Statement {
  return { text: `select pg_total_relation_size('"${name}"')::text as bytes`, values: [] };
}

/** A payload's primary key, its timestamp as PostgreSQL's text (a JavaScript `Date` would drop the microseconds). */
export interface PayloadKey extends EventKey {
  receivedAt: string;
}

/**
 * The key `rows` keys along a partition's primary key after `after` (from its start without one), or no row when
 * fewer remain: one slice of a count, read from the index alone.
 */
export function partitionKeyAfter(name: string, after: PayloadKey | undefined, rows: number): Statement {
  return {
    text: `
      select provider, event_id as "eventId", received_at::text as "receivedAt"
        from "${name}"
       ${after ? `where ${keysAfter(2)}` : ''}
       order by provider, event_id, received_at
      offset $1 - 1 limit 1`,
    values: after ? [rows, after.provider, after.eventId, after.receivedAt] : [rows],
  };
}

/** The keys after one along the primary key, its provider, event id and timestamp the parameters from `$first`. */
function keysAfter(first: number): string {
  return `(provider, event_id, received_at) > ($${first}, $${first + 1}, $${first + 2}::timestamptz)`;
}

/** The payloads a partition holds after `after` along its primary key (all of them without one). */
export function countPartitionRows(name: string, after?: PayloadKey): Statement {
  return after
    ? {
        text: `select count(*)::int as n from "${name}" where ${keysAfter(1)}`,
        values: [after.provider, after.eventId, after.receivedAt],
      }
    : { text: `select count(*)::int as n from "${name}"`, values: [] };
}

/**
 * Detaches an expired day's partition through `webhook_inbox_detach_payload_partition` (migration 0014), which the
 * application's role runs without owning the table; a partition left pending by an interrupted `DETACH ...
 * CONCURRENTLY` is finalized instead. The function takes ACCESS EXCLUSIVE on the parent for the catalog change
 * alone, waiting 50 ms at most for it: the receiver's inserts wait that long at worst, and a busier table answers
 * lock_not_available (`LOCK_NOT_AVAILABLE`), to be tried again.
 */
export function detachPartition(name: string): Statement {
  return { text: 'select webhook_inbox_detach_payload_partition($1)', values: [name] };
}

/**
 * Days' tables attached to nothing: detached by a purge cut off before it dropped them (or by hand). Retention
 * drops them.
 */
export function selectDetachedDays(): Statement {
  return {
    text: `
      select c.relname as name
        from pg_class c
       where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
         and c.relname ~ '^${PREFIX}[0-9]{8}$'
         and not exists (select from pg_inherits i where i.inhrelid = c.oid)
       order by c.relname`,
    values: [],
  };
}

/** What `detachPartition` fails with when the parent's lock did not come within its 50 ms. */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Drops a day's table once detached (`webhook_inbox_drop_payload_partition`, migration 0014): a table of its own
 * then, so dropping it locks nothing the receiver uses; in a transaction of its own, so the parent's lock is not
 * held while its files are unlinked. Nothing when it is gone already.
 */
export function dropDetachedPartition(name: string): Statement {
  return { text: 'select webhook_inbox_drop_payload_partition($1)', values: [name] };
}

// The payloads of one partition whose events are all done, or gone (key retention deleted them): not received,
// processing or failed, in the default group or any other.
const DONE = `not exists (
  select from webhook_events e
   where e.provider = p.provider and e.event_id = p.event_id and e.received_at = p.received_at
     and e.status in ${sqlList(PENDING_STATUSES)})
  and not exists (
  select from webhook_event_groups g
   where g.provider = p.provider and g.event_id = p.event_id
     and g.status in ${sqlList(PENDING_STATUSES)})`;

/**
 * Retention of an expired partition that still holds an event in flight (it stays, for that event's worker):
 * deletes up to `limit` payloads of its finished events received from `from` on, oldest first, skipping rows
 * another transaction holds. Answers `n` (rows deleted) and `last` (the last row's `received_at`, the next
 * `from`), as the other retention batches do.
 */
export function deleteDonePayloads(name: string, from: string, limit: number): Statement {
  return {
    text: `
      with batch as (
        delete from "${name}"
        where ctid = any(array(
          select p.ctid from "${name}" p
           where p.received_at >= $1::timestamptz and ${DONE}
           order by p.received_at
           limit $2
           for update skip locked))
        returning received_at)
      select count(*)::int as n, max(received_at)::text as last from batch`,
    values: [from, limit],
  };
}

/** Retention's dry run: how many payloads of a partition a purge would remove (those of events that are done). */
export function countDonePayloads(name: string): Statement {
  return { text: `select count(*)::int as n from "${name}" p where ${DONE}`, values: [] };
}
