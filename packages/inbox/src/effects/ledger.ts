/**
 * Every statement the effect runner sends, as text + values (pg-boss's plans.ts style), so the whole protocol can
 * be read in one place. `effect_runs` is the per-event ledger; `idempotency_keys` holds the claims of external
 * effects and the keys of scoped effects. An event's status is `webhook_events`'s for the default consumer group
 * and its `webhook_event_groups` row's for any other: the statements that start, settle and mark events dead
 * take the worker's group. The statements of everything else on these tables (the receiver's insert,
 * the event log's reads, replay, retention, reconciliation) are in `../sql/`, one module per table.
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
 * `webhook_event_groups` rows. A late `failed`/`dead` never overwrites `processed` (another attempt finished every
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
        select v.provider, v.event_id, v.received_at,
               case when l.effects is null then v.status else 'failed' end as status,
               case when l.effects is null then v.last_error
                    else '${LEDGER_LACKS_EFFECTS}: ' || l.effects || ' (commits lost, as in a failover); they run again'
               end as last_error
          from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
                 as v(provider, event_id, status, last_error, received_at)
          left join lacking l on l.provider = v.provider and l.event_id = v.event_id and v.status = 'processed'
      )
      update ${grouped ? 'webhook_event_groups g' : 'webhook_events e'}
         set status = v.status,
             last_error = v.last_error,
             processed_at = case when v.status = 'processed' then now() else ${t}.processed_at end
        from v${grouped ? ', webhook_events e' : ''}
       where ${t}.provider = v.provider and ${t}.event_id = v.event_id
         ${grouped ? 'and g.consumer_group = $9 and e.provider = g.provider and e.event_id = g.event_id' : ''}
         and e.received_at between v.received_at - interval '1 ms' and v.received_at + interval '1 ms'
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

export interface DatabaseClaimRow extends Record<string, unknown> {
  provider: string;
  event_id: string;
  effect: string;
  /** False when another event already used the scope's key: the body is skipped, the ledger row completes. */
  fresh: boolean;
}

/**
 * Database effects, inside their transaction, BEFORE they run: writes their ledger rows as completed (visible only
 * if the transaction commits) and takes the rows' locks, so a second worker on the same event waits here and
 * then finds them completed. Returns the effects to run; an effect absent from the answer was already completed.
 * Scoped effects also take their scope's key. Rows are written in key order, so two batches lock in one order.
 */
export function claimDatabaseEffects(refs: readonly DatabaseEffectRef[]): Statement {
  return {
    text: `
      with input as (
        select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[])
          as t(provider, event_id, effect, key, scoped)
      ),
      k as (
        insert into idempotency_keys (key, effect, provider, event_id, status, attempts, claimed_at, completed_at)
        select distinct on (key) key, effect, provider, event_id, 'completed', 1, now(), now()
          from input where scoped order by key
        on conflict (key) do nothing
        returning key
      ),
      r as (
        insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, completed_at)
        select provider, event_id, effect, 'completed', 1, key, now(), now()
          from input order by provider, event_id, effect
        on conflict (provider, event_id, effect) do update
           set status = 'completed', attempts = r.attempts + 1, idempotency_key = excluded.idempotency_key,
               started_at = excluded.started_at, completed_at = excluded.completed_at, last_error = null
         where r.status <> 'completed'
        returning provider, event_id, effect
      )
      select r.provider, r.event_id, r.effect, (not i.scoped or i.key in (select key from k)) as fresh
        from r join input i using (provider, event_id, effect)`,
    values: [
      refs.map((r) => r.provider),
      refs.map((r) => r.eventId),
      refs.map((r) => r.effect),
      refs.map((r) => r.idempotencyKey),
      refs.map((r) => r.scoped),
    ],
  };
}

/** Database effect, after its transaction rolled back: one more attempt, and why it failed. */
export function recordDatabaseFailure(ref: EffectRef, startedAt: Date, error: string): Statement {
  return {
    name: 'webhook_inbox_effect_failed',
    text: `
      insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, last_error)
      values ($1, $2, $3, 'failed', 1, $4, $5, $6)
      on conflict (provider, event_id, effect) do update
         set status = 'failed', attempts = r.attempts + 1, started_at = excluded.started_at,
             last_error = excluded.last_error
       where r.status <> 'completed'`,
    values: [ref.provider, ref.eventId, ref.effect, ref.idempotencyKey, startedAt, error],
  };
}

export interface ExternalClaimRow {
  key: string;
  /** Null: the key was already completed, or is held (below), so nothing was claimed. */
  key_attempts: number | null;
  /** The key's status before this claim; `claimed` means an earlier attempt never reported back. */
  prior_status: 'claimed' | 'completed' | 'failed' | null;
  /** False: this event's effect was already completed, or the key is held. */
  run_claimed: boolean;
  /**
   * Set when another attempt holds the key (its claim has not expired: it may still be running the effect or
   * marking it done): nothing was claimed or written, and the caller waits and claims again.
   */
  held_until: Date | null;
}

export interface ExternalEffectRef extends EffectRef {
  /** How long the claim holds the key from the database's now, unless its attempt renews it (`renewClaim`). */
  leaseMs: number;
}

/**
 * External effects, committed BEFORE they run (keys unique in one call): each free key is claimed for its lease,
 * and the event's ledger row says `running`. Where the key was completed (by this event, or under its
 * scope by another), the ledger row is completed instead and nothing runs.
 *
 * The claim is the only guard, so it decides on the key's latest row: a conflicting insert waits for a claimant
 * in flight and then updates only a key that is neither completed nor claimed and unexpired. A key it leaves
 * alone that this statement's snapshot did not see completed is reported held (`held_until`: the claim's expiry
 * if it saw one, else now), and the caller claims again after a pause.
 */
export function claimExternalEffects(refs: readonly ExternalEffectRef[]): Statement {
  return {
    name: 'webhook_inbox_claim_external',
    text: `
      with input as (
        select provider, event_id, effect, key, now() + make_interval(secs => lease_ms / 1000) as claim_expires_at
          from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[])
            as t(provider, event_id, effect, key, lease_ms)
      ),
      prior as (
        select key, status, claim_expires_at from idempotency_keys where key in (select key from input)
      ),
      k as (
        insert into idempotency_keys as k (key, effect, provider, event_id, status, attempts, claimed_at, claim_expires_at)
        select key, effect, provider, event_id, 'claimed', 1, now(), claim_expires_at from input order by key
        on conflict (key) do update
           set status = 'claimed', attempts = k.attempts + 1, claimed_at = now(), provider = excluded.provider,
               event_id = excluded.event_id, claim_expires_at = excluded.claim_expires_at, last_error = null
         where k.status <> 'completed'
           and (k.status <> 'claimed' or k.claim_expires_at is null or k.claim_expires_at <= now())
        returning key, attempts
      ),
      outcome as (
        select i.*, k.attempts as key_attempts, p.status as prior_status,
               case when k.key is null and p.status is distinct from 'completed'
                    then greatest(p.claim_expires_at, now()) end as held_until
          from input i left join k using (key) left join prior p using (key)
      ),
      r as (
        insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, completed_at)
        select provider, event_id, effect,
               case when key_attempts is null then 'completed' else 'running' end,
               case when key_attempts is null then 0 else 1 end,
               key, now(), case when key_attempts is null then now() end
          from outcome where held_until is null
         order by provider, event_id, effect
        on conflict (provider, event_id, effect) do update
           set status = excluded.status, attempts = r.attempts + excluded.attempts,
               idempotency_key = excluded.idempotency_key, started_at = excluded.started_at,
               completed_at = excluded.completed_at, last_error = null
         where r.status <> 'completed'
        returning provider, event_id, effect
      )
      select o.key, o.key_attempts, o.prior_status, (r.effect is not null) as run_claimed, o.held_until
        from outcome o left join r using (provider, event_id, effect)`,
    values: [
      refs.map((r) => r.provider),
      refs.map((r) => r.eventId),
      refs.map((r) => r.effect),
      refs.map((r) => r.idempotencyKey),
      refs.map((r) => r.leaseMs),
    ],
  };
}

/**
 * An attempt that claimed a key gives up on it without knowing whether the effect happened (its mark could not be
 * written): the key stops being held, so the next attempt need not wait for the lease to run out. Status unchanged.
 */
export function releaseClaim(ref: EffectRef): Statement {
  return {
    name: 'webhook_inbox_release_claim',
    text: `update idempotency_keys set claim_expires_at = null where key = $1 and status = 'claimed'`,
    values: [ref.idempotencyKey],
  };
}

/**
 * The claiming attempt, still running the effect or marking it done, moves its lease to `leaseMs` from now (never
 * earlier than it was). Only its own claim: `attempts` is the claim's number, so a later claimant's lease is left alone.
 */
export function renewClaim(ref: EffectRef, attempts: number, leaseMs: number): Statement {
  return {
    name: 'webhook_inbox_renew_claim',
    text: `
      update idempotency_keys
         set claim_expires_at = greatest(claim_expires_at, now() + make_interval(secs => $3::float8 / 1000))
       where key = $1 and status = 'claimed' and attempts = $2`,
    values: [ref.idempotencyKey, attempts, leaseMs],
  };
}

/** External effect, right after it happened: one autocommit statement marks the key and the ledger row. */
export function completeExternalEffect(ref: EffectRef): Statement {
  return {
    name: 'webhook_inbox_complete_external',
    text: `
      with k as (
        update idempotency_keys set status = 'completed', completed_at = now(), last_error = null where key = $4
      )
      update effect_runs set status = 'completed', completed_at = now(), last_error = null
       where provider = $1 and event_id = $2 and effect = $3`,
    values: [ref.provider, ref.eventId, ref.effect, ref.idempotencyKey],
  };
}

/** External effect that threw: the claim is released as `failed` (it did not happen, as far as we know). */
export function failExternalEffect(ref: EffectRef, error: string): Statement {
  return {
    name: 'webhook_inbox_fail_external',
    text: `
      with k as (
        update idempotency_keys set status = 'failed', last_error = $5 where key = $4 and status = 'claimed'
      )
      update effect_runs set status = 'failed', last_error = $5
       where provider = $1 and event_id = $2 and effect = $3 and status <> 'completed'`,
    values: [ref.provider, ref.eventId, ref.effect, ref.idempotencyKey, error],
  };
}
