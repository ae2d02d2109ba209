import { OPEN_REPLAY_OPERATION_STATUSES, PENDING_STATUSES, sqlList } from '@webhook-inbox/db/statuses';
import type { EventCursor } from './event-filter.ts';
import type { Statement } from './statement.ts';

/**
 * Statements on `replay_operations` (bulk replays created by the console, advanced by its operations runner) and
 * `replay_operation_events` (the events each replayed, written with its progress; its outcome).
 */

const COLUMNS = `
  id, filter, received_up_to as "receivedUpTo", status, total, done, enqueued, failed, cursor,
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

export function listOperations(limit: number): Statement {
  return { text: `select ${COLUMNS} from replay_operations order by id desc limit $1`, values: [limit] };
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
  /** The events the chunk replayed (an event refused is not one): what the outcome counts. */
  replayed: ReadonlyArray<{ provider: string; eventId: string }>;
}

/**
 * Records a chunk's progress and renews the lease; answers the operation's status (an operator may have
 * cancelled it meanwhile) or no row when the lease went to another runner.
 */
export function recordProgress(id: number, runner: string, leaseMs: number, progress: Progress): Statement {
  return {
    text: `
      with operation as (
        update replay_operations
           set done = done + $3, enqueued = enqueued + $4, failed = failed + $5, cursor = $6::jsonb,
               last_error = coalesce($7, last_error), updated_at = now(),
               locked_until = now() + $8 * interval '1 millisecond'
         where id = $1 and locked_by = $2
        returning id, status
      ),
      replayed as (
        insert into replay_operation_events (operation_id, provider, event_id)
        select o.id, k.provider, k.event_id from operation o, unnest($9::text[], $10::text[]) as k(provider, event_id)
        on conflict do nothing
      )
      select status from operation`,
    values: [
      id,
      runner,
      progress.done,
      progress.enqueued,
      progress.failed,
      JSON.stringify(progress.cursor),
      progress.lastError,
      leaseMs,
      progress.replayed.map((k) => k.provider),
      progress.replayed.map((k) => k.eventId),
    ],
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

// The replayed events' status now, in the operation's consumer group (its filter's `group`, else the default).
const REPLAYED_STATUS = `
  select x.operation_id, x.provider, x.event_id,
         case when coalesce(o.filter->>'group', '') in ('', 'default') then e.status else g.status end as status
    from replay_operation_events x
    join replay_operations o on o.id = x.operation_id
    left join webhook_events e on e.provider = x.provider and e.event_id = x.event_id
    left join webhook_event_groups g
      on g.provider = x.provider and g.event_id = x.event_id and g.consumer_group = o.filter->>'group'
   where x.operation_id = any($1::bigint[])`;

/** What became of the operations' replayed events: processed, still failing, dead, gone; one row each. */
export function selectOutcomes(ids: readonly number[]): Statement {
  return {
    text: `
      select operation_id::int as id, count(*) filter (where status = 'processed')::int as processed,
             count(*) filter (where status in ${sqlList(PENDING_STATUSES)})::int as failing,
             count(*) filter (where status = 'dead')::int as dead,
             count(*) filter (where status is null)::int as gone
        from (${REPLAYED_STATUS}) s group by operation_id`,
    values: [ids],
  };
}

/** Outcome classes as `selectOutcome` names them, with the statuses each holds. */
export const OUTCOME_STATUSES = {
  processed: ['processed'],
  failing: PENDING_STATUSES,
  dead: ['dead'],
} as const;

/** An operation's replayed events of one outcome, `limit` of them, by key. */
export function selectOutcomeEvents(
  id: number,
  outcome: keyof typeof OUTCOME_STATUSES,
  limit: number,
): Statement {
  return {
    text: `select provider, event_id as "eventId", status from (${REPLAYED_STATUS}) s
            where status = any($2::text[]) order by provider, event_id limit $3`,
    values: [[id], OUTCOME_STATUSES[outcome], limit],
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
