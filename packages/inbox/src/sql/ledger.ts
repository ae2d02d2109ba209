/**
 * The effect runner's statements on events, as text + values (pg-boss's plans.ts style): an attempt's start, its
 * settlement, and a dead letter's mark. An event's status is `webhook_events`'s for the default consumer group and
 * its `webhook_event_groups` row's for any other: each statement takes the worker's group. The ledger's own
 * statements are with their tables: the database effects' claims and failures in `effect-runs.ts`, the
 * external effects' claims and marks in `idempotency-keys.ts`; everything else on these tables (the
 * receiver's insert, the event log's reads, replay, retention, reconciliation) is in the other modules of this folder.
 *
 * An attempt is fenced by its number: `startAttempts` increments the event's `attempts` (on the group's row for
 * another group) and returns it, so another attempt of the event (its job retried elsewhere after this worker went
 * silent) changes it. The statements that write for an attempt (its database effects' claims, a failure's record,
 * the settlement) match on that number and on the row's `received_at`: an attempt that was taken over writes
 * nothing over the new one's rows.
 */

import { DEFAULT_GROUP, SETTLED_STATUSES, sqlList } from '@webhook-inbox/db/statuses';
import type { EventKey } from '../event-key.ts';
import type { Statement } from './statement.ts';
import { PAYLOAD_OF_EVENT } from './webhook-events.ts';

export type { EventKey, Statement };

export interface LoadedEventRow {
  provider: string;
  event_id: string;
  type: string;
  /** `payload::text`: parsed losslessly by the runner (jsonb keeps every digit; JSON.parse would not). */
  payload: string | null;
  headers: Record<string, string>;
  received_at: Date;
  attempts: number;
  completed: string[];
}

/**
 * Starts an attempt for a batch of events: `processing`, one more attempt, and what the runner needs, including
 * the effects already completed (those are never run again). A `processed` event stays `processed`: a late
 * attempt of a job another worker already finished (its worker was cut off, the job expired and was completed
 * elsewhere) would otherwise leave it `processing` for good, with no job left to settle it. A replay sets the
 * event back to `received` before it enqueues, so it still shows `processing` while it runs. For a group other
 * than the default, the same on the event's group row (`startGroupAttempts`).
 */
export function startAttempts(keys: readonly EventKey[], group: string = DEFAULT_GROUP): Statement {
  if (group !== DEFAULT_GROUP) return startGroupAttempts(keys, group);
  return {
    name: 'webhook_inbox_start_attempts',
    text: `
      update webhook_events e
         set status = case when e.status = 'processed' then e.status else 'processing' end,
             attempts = e.attempts + 1
        from unnest($1::text[], $2::text[]) as k(provider, event_id)
       where e.provider = k.provider and e.event_id = k.event_id
      returning e.provider, e.event_id, e.type, ${PAYLOAD_OF_EVENT} as payload, e.headers, e.received_at, e.attempts,
                array(select r.effect from effect_runs r
                       where r.provider = e.provider and r.event_id = e.event_id and r.status = 'completed')
                  as completed`,
    values: [keys.map((k) => k.provider), keys.map((k) => k.eventId)],
  };
}

/**
 * `startAttempts` for another consumer group: the same on the events' `webhook_event_groups` rows, the event read
 * from `webhook_events`. An event without a row of the group (a job sent by hand) is not returned.
 */
function startGroupAttempts(keys: readonly EventKey[], group: string): Statement {
  return {
    name: 'webhook_inbox_start_group_attempts',
    text: `
      update webhook_event_groups g
         set status = case when g.status = 'processed' then g.status else 'processing' end,
             attempts = g.attempts + 1
        from unnest($1::text[], $2::text[]) as k(provider, event_id), webhook_events e
       where g.provider = k.provider and g.event_id = k.event_id and g.consumer_group = $3
         and e.provider = g.provider and e.event_id = g.event_id
      returning e.provider, e.event_id, e.type, ${PAYLOAD_OF_EVENT} as payload, e.headers, e.received_at, g.attempts,
                array(select r.effect from effect_runs r
                       where r.provider = e.provider and r.event_id = e.event_id and r.status = 'completed')
                  as completed`,
    values: [keys.map((k) => k.provider), keys.map((k) => k.eventId), group],
  };
}

export interface Settlement extends EventKey {
  /**
   * The `received_at` of the row this attempt started on: the row's identity beyond its key. A row recorded again
   * under the same key after the first was lost (a failover to a replica that had not received it, then the
   * provider's redelivery) is another row, and an attempt of the lost one never settles it. Compared to the
   * millisecond a JavaScript Date keeps of PostgreSQL's microseconds.
   */
  receivedAt: Date;
  /** The attempt's number (`startAttempts`): a settlement of an attempt another one took over changes nothing. */
  attempt: number;
  status: 'processed' | 'failed' | 'dead';
  lastError: string | null;
  /** The event's effects: `processed` stands only if the ledger holds each one completed (`settleEvents`). */
  effects?: readonly string[];
}

export interface SettledRow {
  provider: string;
  event_id: string;
  type: string;
  status: 'processed' | 'failed' | 'dead';
  attempts: number;
  last_error: string | null;
  received_at: Date;
}

/** The `last_error` of an event settled `failed` because the ledger lacks effects its attempt saw complete. */
export const LEDGER_LACKS_EFFECTS = 'the ledger lacks completed effects';

/** Why an attempt ends `failed` when the database it settles on does not know it started (`settleEvents`). */
export const ATTEMPT_START_LOST = 'the event row does not know this attempt started (lost, as in a failover)';

/** A row `settleEvents` answers: one it settled, or one whose attempt's start it did not find (`start_lost`). */
export interface SettleRow extends SettledRow {
  start_lost: boolean;
}

/**
 * Ends the attempts of a batch in one statement, on `webhook_events` (default group) or the group's
 * `webhook_event_groups` rows, each only while its attempt is the event's latest (`attempt`). A late `failed`/`dead` never overwrites `processed` (another attempt finished every
 * effect meanwhile), and an event already `dead` is not returned again, so `onDead` fires once.
 *
 * `processed` stands only where the ledger, read by this statement, holds each of the event's `effects`
 * completed; else the event is `failed` (`LEDGER_LACKS_EFFECTS`) and its job retried, which runs them again. An
 * attempt knows its effects committed, not that the database it settles on still has them: after a failover, the
 * commits the replica had not received (asynchronous replication, or the effects' `synchronous_commit = off`) are
 * gone, while the attempt's later statements (its marks, this one) reach the promoted replica, where the event's
 * row, recorded before, is the same row.
 *
 * The same failover can lose the attempt's start (`startAttempts`) while pg-boss's fetch of its job, committed
 * earlier, reached the replica: the row there counts fewer attempts than this one and is not settled. Completing
 * the job would strand the event, so the statement also returns those rows (`start_lost`, not updated), and the
 * attempt ends `failed` (`ATTEMPT_START_LOST`): pg-boss retries the job, which starts the attempt again.
 */
export function settleEvents(settlements: readonly Settlement[], group: string = DEFAULT_GROUP): Statement {
  const grouped = group !== DEFAULT_GROUP;
  const t = grouped ? 'g' : 'e'; // the row that holds the group's status: the event's own for the default group
  const required = settlements.flatMap((s) =>
    s.status === 'processed' ? (s.effects ?? []).map((effect) => ({ ...s, effect })) : [],
  );
  // The row this attempt started on: its key (and group), and its received_at (a row recorded again is another).
  const sameRow = `${t}.provider = v.provider and ${t}.event_id = v.event_id
           ${grouped ? 'and g.consumer_group = $10 and e.provider = g.provider and e.event_id = g.event_id' : ''}
           and e.received_at between v.received_at - interval '1 ms' and v.received_at + interval '1 ms'`;
  return {
    name: grouped ? 'webhook_inbox_settle_group_events' : 'webhook_inbox_settle_events',
    text: `
      with lacking as (
        select q.provider, q.event_id, string_agg(q.effect, ', ' order by q.effect) as effects
          from unnest($6::text[], $7::text[], $8::text[]) as q(provider, event_id, effect)
         where not exists (select 1 from effect_runs r
                            where r.provider = q.provider and r.event_id = q.event_id and r.effect = q.effect
                              and r.status = 'completed')
         group by q.provider, q.event_id
      ),
      v as (
        select v.provider, v.event_id, v.received_at, v.attempt,
               case when l.effects is null then v.status else 'failed' end as status,
               case when l.effects is null then v.last_error
                    else '${LEDGER_LACKS_EFFECTS}: ' || l.effects || ' (commits lost, as in a failover); they run again'
               end as last_error
          from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $9::int[])
                 as v(provider, event_id, status, last_error, received_at, attempt)
          left join lacking l on l.provider = v.provider and l.event_id = v.event_id and v.status = 'processed'
      ),
      settled as (
        update ${grouped ? 'webhook_event_groups g' : 'webhook_events e'}
           set status = v.status,
               last_error = v.last_error,
               processed_at = case when v.status = 'processed' then now() else ${t}.processed_at end
          from v${grouped ? ', webhook_events e' : ''}
         where ${sameRow}
           and ${t}.attempts = v.attempt
           and (v.status = 'processed' or ${t}.status <> 'processed')
           and (v.status <> 'dead' or ${t}.status <> 'dead')
        returning ${t}.provider, ${t}.event_id, e.type, ${t}.status, ${t}.attempts, ${t}.last_error, e.received_at
      )
      select settled.*, false as start_lost from settled
      union all
      select ${t}.provider, ${t}.event_id, e.type, ${t}.status, ${t}.attempts, ${t}.last_error, e.received_at,
             true as start_lost
        from v, ${grouped ? 'webhook_event_groups g, webhook_events e' : 'webhook_events e'}
       where ${sameRow}
         and ${t}.attempts < v.attempt
         and ${t}.status not in ${sqlList(SETTLED_STATUSES)}`,
    values: [
      settlements.map((s) => s.provider),
      settlements.map((s) => s.eventId),
      settlements.map((s) => s.status),
      settlements.map((s) => s.lastError),
      settlements.map((s) => s.receivedAt),
      required.map((r) => r.provider),
      required.map((r) => r.eventId),
      required.map((r) => r.effect),
      settlements.map((s) => s.attempt),
      ...(grouped ? [group] : []),
    ],
  };
}

/**
 * An event whose job reached the dead-letter queue without our handler settling it (the last attempt's worker
 * died, or the job timed out): `dead`, once; on the group's row for a group other than the default.
 */
export function markDead(key: EventKey, reason: string, group: string = DEFAULT_GROUP): Statement {
  const grouped = group !== DEFAULT_GROUP;
  const t = grouped ? 'g' : 'e';
  return {
    text: `
      update ${grouped ? 'webhook_event_groups g' : 'webhook_events e'}
         set status = 'dead', last_error = coalesce(${t}.last_error, $3)
        ${grouped ? 'from webhook_events e' : ''}
       where ${t}.provider = $1 and ${t}.event_id = $2 and ${t}.status not in ${sqlList(SETTLED_STATUSES)}
         ${grouped ? 'and g.consumer_group = $4 and e.provider = g.provider and e.event_id = g.event_id' : ''}
      returning ${t}.provider, ${t}.event_id, e.type, ${t}.status, ${t}.attempts, ${t}.last_error, e.received_at`,
    values: [key.provider, key.eventId, reason, ...(grouped ? [group] : [])],
  };
}
