/**
 * Every statement the effect runner sends, as text + values (pg-boss's plans.ts style), so the whole protocol can
 * be read in one place. `effect_runs` is the per-event ledger; `idempotency_keys` holds the claims of external
 * effects and the keys of scoped effects.
 */

export interface Statement {
  text: string;
  values: unknown[];
}

export interface EventKey {
  provider: string;
  eventId: string;
}

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
 * the effects already completed (those are never run again).
 */
export function startAttempts(keys: readonly EventKey[]): Statement {
  return {
    text: `
      update webhook_events e
         set status = 'processing', attempts = e.attempts + 1
        from unnest($1::text[], $2::text[]) as k(provider, event_id)
       where e.provider = k.provider and e.event_id = k.event_id
      returning e.provider, e.event_id, e.type, e.payload::text as payload, e.headers, e.received_at, e.attempts,
                array(select r.effect from effect_runs r
                       where r.provider = e.provider and r.event_id = e.event_id and r.status = 'completed')
                  as completed`,
    values: [keys.map((k) => k.provider), keys.map((k) => k.eventId)],
  };
}

export interface Settlement extends EventKey {
  status: 'processed' | 'failed' | 'dead';
  lastError: string | null;
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

/**
 * Ends the attempts of a batch in one statement. A late `failed`/`dead` never overwrites `processed` (another
 * attempt finished every effect meanwhile), and an event already `dead` is not returned again, so `onDead` fires
 * once.
 */
export function settleEvents(settlements: readonly Settlement[]): Statement {
  return {
    text: `
      update webhook_events e
         set status = v.status,
             last_error = v.last_error,
             processed_at = case when v.status = 'processed' then now() else e.processed_at end
        from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as v(provider, event_id, status, last_error)
       where e.provider = v.provider and e.event_id = v.event_id
         and (v.status = 'processed' or e.status <> 'processed')
         and (v.status <> 'dead' or e.status <> 'dead')
      returning e.provider, e.event_id, e.type, e.status, e.attempts, e.last_error, e.received_at`,
    values: [
      settlements.map((s) => s.provider),
      settlements.map((s) => s.eventId),
      settlements.map((s) => s.status),
      settlements.map((s) => s.lastError),
    ],
  };
}

/**
 * An event whose job reached the dead-letter queue without our handler settling it (the last attempt's worker
 * died, or the job timed out): `dead`, once.
 */
export function markDead(key: EventKey, reason: string): Statement {
  return {
    text: `
      update webhook_events
         set status = 'dead', last_error = coalesce(last_error, $3)
       where provider = $1 and event_id = $2 and status not in ('processed', 'dead')
      returning provider, event_id, type, status, attempts, last_error, received_at`,
    values: [key.provider, key.eventId, reason],
  };
}

export interface EffectRef extends EventKey {
  effect: string;
  idempotencyKey: string;
}

/**
 * Database effect, inside its transaction, BEFORE the effect runs: writes the ledger row as completed (visible
 * only if the transaction commits) and takes its row lock, so a second worker on the same event waits here and
 * then finds it completed. For a scoped effect, also takes the scope's key; `fresh` is false when another event
 * already used it (the body is then skipped but this event's ledger row still completes).
 */
export function recordDatabaseEffect(ref: EffectRef, scoped: boolean): Statement {
  const key = scoped
    ? `k as (
         insert into idempotency_keys (key, effect, provider, event_id, status, attempts, claimed_at, completed_at)
         values ($4, $3, $1, $2, 'completed', 1, now(), now())
         on conflict (key) do nothing
         returning 1
       ),`
    : '';
  return {
    text: `
      with ${key}
      r as (
        insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, completed_at)
        values ($1, $2, $3, 'completed', 1, $4, now(), now())
        on conflict (provider, event_id, effect) do update
           set status = 'completed', attempts = r.attempts + 1, idempotency_key = excluded.idempotency_key,
               started_at = excluded.started_at, completed_at = excluded.completed_at, last_error = null
         where r.status <> 'completed'
        returning 1
      )
      select exists(select 1 from r) as claimed, ${scoped ? 'exists(select 1 from k)' : 'true'} as fresh`,
    values: [ref.provider, ref.eventId, ref.effect, ref.idempotencyKey],
  };
}

/** Database effect, after its transaction rolled back: one more attempt, and why it failed. */
export function recordDatabaseFailure(ref: EffectRef, startedAt: Date, error: string): Statement {
  return {
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

// Advisory locks in their own class (first argument), so they never meet another use of pg_advisory_lock.
const LOCK_CLASS = 0x57_49_4e; // 'WIN'

/** Serialises the claimants of one key (two events of one account, two workers on one event). */
export function tryLockKey(idempotencyKey: string): Statement {
  return {
    text: `select pg_try_advisory_lock(${LOCK_CLASS}, hashtext($1)) as locked`,
    values: [idempotencyKey],
  };
}

export function unlockKey(idempotencyKey: string): Statement {
  return { text: `select pg_advisory_unlock(${LOCK_CLASS}, hashtext($1))`, values: [idempotencyKey] };
}

export interface ClaimRow {
  /** Null: the key was already completed, so this event's effect is completed without running. */
  key_attempts: number | null;
  /** The key's status before this claim; `claimed` means an earlier attempt never reported back. */
  prior_status: 'claimed' | 'completed' | 'failed' | null;
  /** False: this event's effect was already completed. */
  run_claimed: boolean;
}

/**
 * External effect, committed BEFORE it runs (under the key's advisory lock): the key is claimed and this event's
 * ledger row says `running`. If the key was completed (by this event, or under its scope by another), the ledger
 * row is completed instead and nothing runs.
 */
export function claimExternalEffect(ref: EffectRef): Statement {
  return {
    text: `
      with prior as (select status from idempotency_keys where key = $4),
      k as (
        insert into idempotency_keys as k (key, effect, provider, event_id, status, attempts, claimed_at)
        values ($4, $3, $1, $2, 'claimed', 1, now())
        on conflict (key) do update
           set status = 'claimed', attempts = k.attempts + 1, claimed_at = now(), provider = excluded.provider,
               event_id = excluded.event_id, last_error = null
         where k.status <> 'completed'
        returning attempts
      ),
      r as (
        insert into effect_runs as r (provider, event_id, effect, status, attempts, idempotency_key, started_at, completed_at)
        select $1, $2, $3, case when c.claimed then 'running' else 'completed' end, case when c.claimed then 1 else 0 end,
               $4, now(), case when c.claimed then null else now() end
          from (select exists(select 1 from k) as claimed) c
        on conflict (provider, event_id, effect) do update
           set status = excluded.status, attempts = r.attempts + excluded.attempts,
               idempotency_key = excluded.idempotency_key, started_at = excluded.started_at,
               completed_at = excluded.completed_at, last_error = null
         where r.status <> 'completed'
        returning 1
      )
      select (select attempts from k) as key_attempts, (select status from prior) as prior_status,
             exists(select 1 from r) as run_claimed`,
    values: [ref.provider, ref.eventId, ref.effect, ref.idempotencyKey],
  };
}

/** External effect, right after it happened: one autocommit statement marks the key and the ledger row. */
export function completeExternalEffect(ref: EffectRef): Statement {
  return {
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
    text: `
      with k as (
        update idempotency_keys set status = 'failed', last_error = $5 where key = $4 and status = 'claimed'
      )
      update effect_runs set status = 'failed', last_error = $5
       where provider = $1 and event_id = $2 and effect = $3 and status <> 'completed'`,
    values: [ref.provider, ref.eventId, ref.effect, ref.idempotencyKey, error],
  };
}
