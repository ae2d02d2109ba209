import { DEFAULT_GROUP, OPEN_REPLAY_OPERATION_STATUSES, sqlList } from '@webhook-inbox/db/statuses';
import type { EventKey } from '@webhook-inbox/inbox';
import type { eventFilter, Statement } from '@webhook-inbox/inbox/sql';

type EventCursor = eventFilter.EventCursor;

/**
 * Statements on `replay_operations` (bulk replays created by the console, advanced by its operations runner) and
 * `replay_operation_events` (the events each replayed, with where each is now: its outcome).
 */

/** An operation's consumer group: its filter's, the default group's when it names none. */
const GROUP = `coalesce(nullif(filter->>'group', ''), '${DEFAULT_GROUP}')`;

const COLUMNS = `
  id, filter, ${GROUP} as "group", received_up_to as "receivedUpTo", status, total, done, enqueued, failed, cursor,
  last_error as "lastError", created_by as "createdBy", created_at as "createdAt", updated_at as "updatedAt",
  finished_at as "finishedAt", cancelled_by as "cancelledBy"`;

export function insertOperation(
  filter: unknown,
  /** A time, or the database's text of one (what `countEvents` answers). */
  receivedUpTo: Date | string,
  total: number,
  createdBy: string,
): Statement {
  return {
    text: `insert into replay_operations (filter, received_up_to, total, created_by)
           values ($1::jsonb, $2, $3, $4) returning ${COLUMNS}`,
    values: [JSON.stringify(filter), receivedUpTo, total, createdBy],
  };
}

export function getOperation(id: number): Statement {
  return { text: `select ${COLUMNS} from replay_operations where id = $1`, values: [id] };
}

/** The newest `limit` operations, of `groups` only when given (a principal limited to them, or one chosen). */
export function listOperations(limit: number, groups?: readonly string[]): Statement {
  return groups === undefined
    ? { text: `select ${COLUMNS} from replay_operations order by id desc limit $1`, values: [limit] }
    : {
        text: `select ${COLUMNS} from replay_operations where ${GROUP} = any($2::text[])
                order by id desc limit $1`,
        values: [limit, groups],
      };
}

/**
 * Takes the oldest unfinished operation whose lease is free (never taken, released, or expired because its
 * runner died) for `runner`, until `leaseMs` from now. Two runners never hold one operation.
 */
export function claimOperation(runner: string, leaseMs: number): Statement {
  return {
    text: `update replay_operations
              set status = 'running', locked_by = $1, locked_until = now() + $2 * interval '1 millisecond',
                  updated_at = now()
            where id = (select id from replay_operations
                         where status in ${sqlList(OPEN_REPLAY_OPERATION_STATUSES)} and (locked_until is null or locked_until < now())
                         order by created_at, id limit 1 for update skip locked)
        returning ${COLUMNS}`,
    values: [runner, leaseMs],
  };
}

export interface Progress {
  done: number;
  enqueued: number;
  failed: number;
  cursor: EventCursor;
  lastError: string | null;
}

/**
 * Records a chunk's progress and renews the lease; answers the operation's status (an operator may have
 * cancelled it meanwhile) or no row when the lease went to another runner.
 */
export function recordProgress(id: number, runner: string, leaseMs: number, progress: Progress): Statement {
  return {
    text: `
      update replay_operations
         set done = done + $3, enqueued = enqueued + $4, failed = failed + $5, cursor = $6::jsonb,
             last_error = coalesce($7, last_error), updated_at = now(),
             locked_until = now() + $8 * interval '1 millisecond'
       where id = $1 and locked_by = $2
      returning status`,
    values: [
      id,
      runner,
      progress.done,
      progress.enqueued,
      progress.failed,
      JSON.stringify(progress.cursor),
      progress.lastError,
      leaseMs,
    ],
  };
}

/**
 * One event the operation replayed (an event refused is not one), with its state now in the operation's consumer
 * `group`, read under a share lock on its status row: a status change committed first is read here, one in flight
 * waits for this row's commit and then moves its outcome (migration 0013's triggers). One event per statement, so
 * the statement holds one event's lock and never waits for a worker while holding another's (no deadlock).
 */
export function recordReplayed(id: number, key: EventKey, group: string): Statement {
  const state =
    group === DEFAULT_GROUP
      ? `select effect_event_state(e.status) from webhook_events e
          where e.provider = $2 and e.event_id = $3 for share`
      : `select effect_event_state(g.status) from webhook_event_groups g
          where g.provider = $2 and g.event_id = $3 and g.consumer_group = $4 for share`;
  return {
    name: group === DEFAULT_GROUP ? 'webhook_inbox_record_replayed' : 'webhook_inbox_record_group_replayed',
    text: `
      insert into replay_operation_events (operation_id, provider, event_id, outcome)
      values ($1, $2, $3, coalesce((${state}), 'gone'))
      on conflict do nothing`,
    values: [id, key.provider, key.eventId, ...(group === DEFAULT_GROUP ? [] : [group])],
  };
}

export interface OutcomeRow {
  id: number;
  /** Where the replayed events are now, in the operation's consumer group. */
  processed: number;
  /** Received, processing or failed: still to succeed (or waiting for their job). */
  failing: number;
  dead: number;
  /** Purged by retention since. */
  gone: number;
}

/** What became of the operations' replayed events: processed, still failing, dead, gone; one row each. */
export function selectOutcomes(ids: readonly number[]): Statement {
  return {
    text: `
      select operation_id::int as id, count(*) filter (where outcome = 'processed')::int as processed,
             count(*) filter (where outcome = 'unfinished')::int as failing,
             count(*) filter (where outcome = 'dead')::int as dead,
             count(*) filter (where outcome = 'gone')::int as gone
        from replay_operation_events
       where operation_id = any($1::bigint[])
       group by operation_id`,
    values: [ids],
  };
}

/** Outcome classes as `selectOutcomes` names them, with the `outcome` each is kept as. */
export const OUTCOME_STATES = { processed: 'processed', failing: 'unfinished', dead: 'dead' } as const;

/** An operation's replayed events of one outcome, `limit` of them, by key, with their status now. */
export function selectOutcomeEvents(
  id: number,
  outcome: keyof typeof OUTCOME_STATES,
  limit: number,
): Statement {
  return {
    text: `
      select x.provider, x.event_id as "eventId",
             case when coalesce(o.filter->>'group', '') in ('', '${DEFAULT_GROUP}') then e.status
                  else (select g.status from webhook_event_groups g
                         where g.provider = x.provider and g.event_id = x.event_id
                           and g.consumer_group = o.filter->>'group') end as status
        from replay_operation_events x
        join replay_operations o on o.id = x.operation_id
        join webhook_events e on e.provider = x.provider and e.event_id = x.event_id
       where x.operation_id = $1 and x.outcome = $2
       order by x.provider, x.event_id limit $3`,
    values: [id, OUTCOME_STATES[outcome], limit],
  };
}

export function completeOperation(id: number, runner: string): Statement {
  return {
    text: `update replay_operations
              set status = 'completed', finished_at = now(), updated_at = now(), locked_by = null, locked_until = null
            where id = $1 and locked_by = $2 and status = 'running'`,
    values: [id, runner],
  };
}

/** Lets another runner (or this one, later) take the operation at once: this runner is stopping. */
export function releaseOperation(id: number, runner: string, lastError: string | null): Statement {
  return {
    text: `update replay_operations
              set locked_by = null, locked_until = null, updated_at = now(), last_error = coalesce($3, last_error)
            where id = $1 and locked_by = $2`,
    values: [id, runner, lastError],
  };
}

/** Stops an unfinished operation; the runner sees it at its next chunk. Answers no row when already finished. */
export function cancelOperation(id: number, cancelledBy: string): Statement {
  return {
    text: `update replay_operations
              set status = 'cancelled', cancelled_by = $2, finished_at = now(), updated_at = now()
            where id = $1 and status in ${sqlList(OPEN_REPLAY_OPERATION_STATUSES)}
        returning ${COLUMNS}`,
    values: [id, cancelledBy],
  };
}
