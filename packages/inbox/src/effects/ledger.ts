/**
 * Every statement the effect runner sends about events and database effects, as text + values (pg-boss's plans.ts
 * style), so the protocol can be read in one place; the claims of external effects are in `claims.ts`.
 * `effect_runs` is the per-event ledger; `idempotency_keys` holds the claims of external effects and the keys of
 * scoped effects. An event's status is `webhook_events`'s for the default consumer group and its
 * `webhook_event_groups` row's for any other: the statements that start, settle and mark events dead take the
 * worker's group. The statements of everything else on these tables (the receiver's insert, the event log's
 * reads, replay, retention, reconciliation) are in `../sql/`, one module per table.
 *
 * An attempt is fenced by its number: `startAttempts` increments the event's `attempts` (on the group's row for
 * another group) and returns it, so another attempt of the event (its job retried elsewhere after this worker went
 * silent) changes it. The statements that write for an attempt (its database effects' claims, a failure's record,
 * the settlement) match on that number and on the row's `received_at`: an attempt that was taken over writes
 * nothing over the new one's rows.
 */

import { DEFAULT_GROUP, SETTLED_STATUSES, sqlList } from '@webhook-inbox/db/statuses';
import type { EventKey } from '../event-key.ts';
import type { Statement } from '../sql/statement.ts';
import { PAYLOAD_OF_EVENT } from '../sql/webhook-events.ts';

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
 */
export function settleEvents(settlements: readonly Settlement[], group: string = DEFAULT_GROUP): Statement {
  const grouped = group !== DEFAULT_GROUP;
  const t = grouped ? 'g' : 'e'; // the row that holds the group's status: the event's own for the default group
  const required = settlements.flatMap((s) =>
    s.status === 'processed' ? (s.effects ?? []).map((effect) => ({ ...s, effect })) : [],
  );
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
      )
      update ${grouped ? 'webhook_event_groups g' : 'webhook_events e'}
         set status = v.status,
             last_error = v.last_error,
             processed_at = case when v.status = 'processed' then now() else ${t}.processed_at end
        from v${grouped ? ', webhook_events e' : ''}
       where ${t}.provider = v.provider and ${t}.event_id = v.event_id
         ${grouped ? 'and g.consumer_group = $10 and e.provider = g.provider and e.event_id = g.event_id' : ''}
         and e.received_at between v.received_at - interval '1 ms' and v.received_at + interval '1 ms'
         and ${t}.attempts = v.attempt
         and (v.status = 'processed' or ${t}.status <> 'processed')
         and (v.status <> 'dead' or ${t}.status <> 'dead')
      returning ${t}.provider, ${t}.event_id, e.type, ${t}.status, ${t}.attempts, ${t}.last_error, e.received_at`,
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

export interface EffectRef extends EventKey {
  effect: string;
  idempotencyKey: string;
}

export interface DatabaseEffectRef extends EffectRef {
  /** The key is a scope's (once per scope), not the event's. */
  scoped: boolean;
}

/** The attempt an effect's statements are fenced to: its number (`startAttempts`) and its row's `received_at`. */
interface AttemptFence {
  attempt: number;
  receivedAt: Date;
}

export interface FencedDatabaseRef extends DatabaseEffectRef, AttemptFence {}

export interface DatabaseClaimRow extends Record<string, unknown> {
  provider: string;
  event_id: string;
  /** Null on the one row of an event whose attempt is no longer current (`held` false). */
  effect: string | null;
  /** False when another event already used the scope's key: the body is skipped, the ledger row completes. */
  fresh: boolean;
  /** False: another attempt of the event started; none of its effects was claimed, and none may run. */
  held: boolean;
}

/**
 * The events of `source` (rows of provider, event_id, attempt, received_at) whose attempt is still the latest,
 * share-locked in key order until the transaction ends: another attempt cannot start (`startAttempts` updates
 * the row) before this transaction commits or rolls back, so what held at this statement holds at the commit.
 */
function currentAttempts(source: string, group: string | undefined): string {
  const attempts = `(select distinct provider, event_id, attempt, received_at from ${source}) a`;
  const sameRow = `e.received_at between a.received_at - interval '1 ms' and a.received_at + interval '1 ms'`;
  if (group === undefined) {
    return `
        select e.provider, e.event_id
          from webhook_events e join ${attempts} on e.provider = a.provider and e.event_id = a.event_id
         where e.attempts = a.attempt and ${sameRow}
         order by e.provider, e.event_id
           for share of e`;
  }
  return `
        select g.provider, g.event_id
          from webhook_event_groups g
          join ${attempts} on g.provider = a.provider and g.event_id = a.event_id and g.consumer_group = ${group}
          join webhook_events e on e.provider = g.provider and e.event_id = g.event_id
         where g.attempts = a.attempt and ${sameRow}
         order by g.provider, g.event_id
           for share of g`;
}

/**
 * Database effects, inside their transaction, BEFORE they run: writes their ledger rows as completed (visible only
 * if the transaction commits) and takes the rows' locks, so a second worker on the same event waits here and
 * then finds them completed. Returns the effects to run; an effect absent from the answer was already completed.
 * Scoped effects also take their scope's key. Rows are written in key order, so two batches lock in one order.
 *
 * Fenced: only the effects of events whose attempt is still current (`currentAttempts`, locked to the commit);
 * an event another attempt has taken over gets one row, `held` false, and nothing of it is claimed.
 */
export function claimDatabaseEffects(
  refs: readonly FencedDatabaseRef[],
  group: string = DEFAULT_GROUP,
): Statement {
  const grouped = group !== DEFAULT_GROUP;
  return {
    text: `
      with input as (
        select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::int[],
                             $7::timestamptz[])
          as t(provider, event_id, effect, key, scoped, attempt, received_at)
      ),
      held as (${currentAttempts('input', grouped ? '$8' : undefined)}
      ),
      mine as (
        select i.* from input i where exists (select 1 from held h where h.provider = i.provider and h.event_id = i.event_id)
      ),
      k as (
        insert into idempotency_keys (key, effect, provider, event_id, status, attempts, claimed_at, completed_at)
        select distinct on (key) key, effect, provider, event_id, 'completed', 1, now(), now()
          from mine where scoped order by key
        on conflict (key) do nothing
        returning key
      ),
      r as (
        insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, completed_at)
        select provider, event_id, effect, 'completed', 1, key, now(), now()
          from mine order by provider, event_id, effect
        on conflict (provider, event_id, effect) do update
           set status = 'completed', attempts = r.attempts + 1, idempotency_key = excluded.idempotency_key,
               started_at = excluded.started_at, completed_at = excluded.completed_at, last_error = null
         where r.status <> 'completed'
        returning provider, event_id, effect
      )
      select r.provider, r.event_id, r.effect, (not i.scoped or i.key in (select key from k)) as fresh, true as held
        from r join input i using (provider, event_id, effect)
      union all
      select distinct i.provider, i.event_id, null, false, false
        from input i where not exists (select 1 from mine m where m.provider = i.provider and m.event_id = i.event_id)`,
    values: [
      refs.map((r) => r.provider),
      refs.map((r) => r.eventId),
      refs.map((r) => r.effect),
      refs.map((r) => r.idempotencyKey),
      refs.map((r) => r.scoped),
      refs.map((r) => r.attempt),
      refs.map((r) => r.receivedAt),
      ...(grouped ? [group] : []),
    ],
  };
}

/**
 * Database effect, after its transaction rolled back: one more attempt, and why it failed; nothing when another
 * attempt of the event has started (the ledger row is the new attempt's).
 */
export function recordDatabaseFailure(
  ref: FencedDatabaseRef,
  startedAt: Date,
  error: string,
  group: string = DEFAULT_GROUP,
): Statement {
  const grouped = group !== DEFAULT_GROUP;
  return {
    name: grouped ? 'webhook_inbox_group_effect_failed' : 'webhook_inbox_effect_failed',
    text: `
      with input as (
        select $1::text as provider, $2::text as event_id, $7::int as attempt, $8::timestamptz as received_at
      ),
      held as (${currentAttempts('input', grouped ? '$9' : undefined)}
      )
      insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
      select provider, event_id, $3, 'failed', 1, $4, $5, $6 from held
      on conflict (provider, event_id, effect) do update
         set status = 'failed', attempts = r.attempts + 1, started_at = excluded.started_at,
             last_error = excluded.last_error
       where r.status <> 'completed'`,
    values: [
      ref.provider,
      ref.eventId,
      ref.effect,
      ref.idempotencyKey,
      startedAt,
      error,
      ref.attempt,
      ref.receivedAt,
      ...(grouped ? [group] : []),
    ],
  };
}
