import type { EventStatus } from '@webhook-inbox/db/statuses';
import type { Statement } from './statement.ts';

/**
 * Statements on `webhook_event_groups` (an event's status in each consumer group other than the default) for
 * replay, the event log and the stats. The receiver creates the rows in its insert (`webhook-events.ts`); the
 * effect runner starts and settles them (`ledger.ts`).
 */

/**
 * Replay for a group, in its transaction: the event's type, its key locked against deletion (retention waits; the
 * default group's worker, which updates the row's status, does not).
 */
export function lockEventKey(provider: string, eventId: string): Statement {
  return {
    text: `select type from webhook_events where provider = $1 and event_id = $2 for key share`,
    values: [provider, eventId],
  };
}

/**
 * Replay for a group, then: the group's row, locked (a replay and the group's worker settling the event take
 * turns); no row when the event was never delivered to the group.
 */
export function lockGroupRow(provider: string, eventId: string, group: string): Statement {
  return {
    text: `
      select status from webhook_event_groups
       where provider = $1 and event_id = $2 and consumer_group = $3
         for update`,
    values: [provider, eventId, group],
  };
}

/** Replay for a group, before it enqueues: the group's row shows `received`, created if it was missing. */
export function requeueGroupEvent(provider: string, eventId: string, group: string): Statement {
  return {
    text: `
      insert into webhook_event_groups as g (provider, event_id, consumer_group) values ($1, $2, $3)
      on conflict (provider, event_id, consumer_group) do update set status = 'received'`,
    values: [provider, eventId, group],
  };
}

export interface EventGroupRow {
  group: string;
  status: EventStatus;
  attempts: number;
  lastError: string | null;
  processedAt: Date | null;
}

/** An event's rows in the other groups, named as `EventGroupRow` names them. */
export function selectEventGroups(provider: string, eventId: string): Statement {
  return {
    text: `
      select consumer_group as "group", status, attempts, last_error as "lastError", processed_at as "processedAt"
        from webhook_event_groups where provider = $1 and event_id = $2 order by consumer_group`,
    values: [provider, eventId],
  };
}

/**
 * Rows per group and unfinished status (processed rows are not counted: their count only grows). Read from the
 * partial index of unfinished rows, so the cost follows the groups' backlogs.
 */
export function countUnfinishedByGroup(): Statement {
  return {
    name: 'webhook_inbox_count_unfinished_by_group',
    text: `
      select consumer_group as "group", status, count(*)::int as n
        from webhook_event_groups
       where status <> 'processed'
       group by consumer_group, status
       order by consumer_group, status`,
    values: [],
  };
}

/**
 * The group rows of a page of events (the event log's per-group status and errors), by key then group; `groups`
 * limits them to those groups (a reader limited to some), undefined: every group's.
 */
export function selectGroupsOf(
  keys: ReadonlyArray<{ provider: string; eventId: string }>,
  groups?: readonly string[],
): Statement {
  return {
    text: `
      select g.provider, g.event_id as "eventId", g.consumer_group as "group", g.status, g.attempts,
             g.last_error as "lastError", g.processed_at as "processedAt"
        from webhook_event_groups g join unnest($1::text[], $2::text[]) as k(provider, event_id)
          on g.provider = k.provider and g.event_id = k.event_id
       where $3::text[] is null or g.consumer_group = any($3::text[])
       order by g.provider, g.event_id, g.consumer_group`,
    values: [keys.map((k) => k.provider), keys.map((k) => k.eventId), groups ?? null],
  };
}

/**
 * Rows per unfinished status of one group (the stats of a team), with the age of its oldest unfinished event in
 * seconds (0 when none). Read from the partial index of unfinished rows.
 */
export function countUnfinishedInGroup(group: string): Statement {
  return {
    text: `
      select coalesce(json_object_agg(status, n) filter (where status is not null), '{}') as "byStatus",
             coalesce(max(age), 0)::float8 as "oldestUnprocessedAgeSeconds"
        from (select g.status, count(*)::int as n,
                     max(extract(epoch from now() - e.received_at)) filter (where g.status <> 'dead') as age
                from webhook_event_groups g
                join webhook_events e on e.provider = g.provider and e.event_id = g.event_id
               where g.consumer_group = $1 and g.status <> 'processed'
               group by g.status) s`,
    values: [group],
  };
}
