import { DEFAULT_GROUP, sqlList, UNFINISHED_STATUSES } from '@webhook-inbox/db/statuses';
import type { EffectRef } from './idempotency-keys.ts';
import type { Statement } from './statement.ts';

/**
 * Statements on `effect_runs` (the effect ledger: one row per event + effect): the database effects' claims and
 * failures (the effect runner's), the event log, replay and the failing effects. The ledger rows an external
 * effect's claim, mark or failure moves are written by that statement, in `idempotency-keys.ts`; the scoped keys
 * of database effects are taken here, by the claim that writes their ledger rows.
 *
 * The runner's statements are fenced to an event's attempt (`ledger.ts`, `startAttempts`): they match
 * on its number and on the row's `received_at`, so an attempt that was taken over writes nothing over the new
 * one's rows.
 */

/** An event's effects with their attempts, errors and times, named as `EffectRunRow` (event-store.ts) names them. */
export function selectEffectRuns(provider: string, eventId: string): Statement {
  return {
    text: `
      select effect, status, attempts, last_error as "lastError", idempotency_key as "idempotencyKey",
             started_at as "startedAt", completed_at as "completedAt", forced_at as "forcedAt"
        from effect_runs where provider = $1 and event_id = $2 order by effect`,
    values: [provider, eventId],
  };
}

/** Replay: the effects of an event that completed (a replay runs the others). */
export function selectCompletedEffects(provider: string, eventId: string): Statement {
  return {
    text: `select effect from effect_runs where provider = $1 and event_id = $2 and status = 'completed'`,
    values: [provider, eventId],
  };
}

/**
 * Replay with `forceEffect`: the completed effect counts as failed again, so the runner runs it, and the ledger
 * keeps that an operator asked for it (`forced_at`).
 */
export function forceEffect(provider: string, eventId: string, effect: string): Statement {
  return {
    text: `
      update effect_runs
         set status = 'failed', forced_at = now(), last_error = 'forced re-run requested by an operator'
       where provider = $1 and event_id = $2 and effect = $3`,
    values: [provider, eventId, effect],
  };
}

// Failed ledger rows per effect among the events that are not processed (an effect of a processed event has
// completed), reached through `webhook_events_status_received_at_idx`, so the cost follows the unfinished events,
// not the ledger's history.
const FAILING_BY_EFFECT = `
  select r.effect, count(*)::int as n, max(r.last_error) as "sampleError"
    from webhook_events e
    join effect_runs r on r.provider = e.provider and r.event_id = e.event_id
   where e.status in ${sqlList(UNFINISHED_STATUSES)} and r.status = 'failed'
   group by r.effect`;

/** The failing effects as one object, `{"notifyCrm": 3}`: the samples. */
export function countFailingByEffect(): Statement {
  return {
    name: 'webhook_inbox_count_failing_by_effect',
    text: `select coalesce(json_object_agg(effect, n), '{}') as "byEffect" from (${FAILING_BY_EFFECT}) failing`,
    values: [],
  };
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
  /** Null on the one row of an event whose current attempt is another one (`held` false). */
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
    // Two texts (the default group's, any other's: the group is a value): one name each.
    name: grouped ? 'webhook_inbox_claim_group_database_effects' : 'webhook_inbox_claim_database_effects',
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
