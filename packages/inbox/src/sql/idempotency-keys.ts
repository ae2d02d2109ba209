/**
 * Statements on `idempotency_keys`: the claims of external effects and of destinations' deliveries (and the ledger
 * rows of `effect_runs` that move with a claim, in the same statement), replay's forgetting of a key, and the
 * event page's lookup of the event that completed a scoped effect. The scoped keys of database effects are taken
 * by the statement that writes their ledger rows (`effect-runs.ts`, `claimDatabaseEffects`).
 *
 * A claim is a lease with a fencing token: every claim writes a fresh `claim_token`, and every later statement of
 * the claiming attempt (renewal, the check before the call, the marks) matches on it and on the claim's number
 * (`attempts`). An attempt whose lease ran out and was taken by another (its worker froze, or lost the database
 * for longer than the lease) matches no row: it learns it lost the claim, and writes nothing over the new
 * holder's.
 */

import type { IdempotencyKeyStatus } from '@webhook-inbox/db/statuses';
import type { EventKey } from '../event-key.ts';
import type { Params, Statement } from './statement.ts';

/** One effect of one event, and the idempotency key it runs under (the event's, or its scope's). */
export interface EffectRef extends EventKey {
  effect: string;
  idempotencyKey: string;
}

export interface ExternalClaimRow {
  key: string;
  /** The claim's number. Null: the key was already completed, or is held (below), so nothing was claimed. */
  key_attempts: number | null;
  /** The claim's fencing token (null when nothing was claimed). */
  claim_token: string | null;
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
  /** How long the claim holds the key from the database's now, unless its attempt renews it (`holdClaim`). */
  leaseMs: number;
}

/** What an attempt that claimed a key proves it still holds: the claim's number and token (`ExternalClaimRow`). */
export interface ClaimFence {
  keyAttempts: number;
  token: string;
}

/**
 * External effects, committed BEFORE they run (keys unique in one call): each free key is claimed for its lease,
 * with a fresh fencing token, and the event's ledger row says `running`. Where the key was completed (by this
 * event, or under its scope by another), the ledger row is completed instead and nothing runs.
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
        insert into idempotency_keys as k
          (key, effect, provider, event_id, status, attempts, claimed_at, claim_expires_at, claim_token)
        select key, effect, provider, event_id, 'claimed', 1, now(), claim_expires_at, gen_random_uuid()
          from input order by key
        on conflict (key) do update
           set status = 'claimed', attempts = k.attempts + 1, claimed_at = now(), provider = excluded.provider,
               event_id = excluded.event_id, claim_expires_at = excluded.claim_expires_at,
               claim_token = excluded.claim_token, last_error = null
         where k.status <> 'completed'
           and (k.status <> 'claimed' or k.claim_expires_at is null or k.claim_expires_at <= now())
        returning key, attempts, claim_token
      ),
      outcome as (
        select i.*, k.attempts as key_attempts, k.claim_token, p.status as prior_status,
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
      select o.key, o.key_attempts, o.claim_token::text, o.prior_status, (r.effect is not null) as run_claimed,
             o.held_until
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

/** The predicate every statement of a claiming attempt matches on: its key, still claimed, by this claim. */
function fenced(key: string, attempts: string, token: string): string {
  return `key = ${key} and status = 'claimed' and attempts = ${attempts} and claim_token = ${token}::uuid`;
}
const FENCED = fenced('$1', '$2', '$3');

/**
 * The claiming attempt proves it still holds its claim and extends it: the lease moves to `leaseMs` from now (never
 * earlier than it was), only where the claim is this attempt's (number and token) and has not expired. No row
 * returned: the claim is lost (expired, taken by another attempt, completed or given up), and the attempt must
 * not run the effect. One round trip; the renewals use it too.
 */
export function holdClaim(ref: EffectRef, fence: ClaimFence, leaseMs: number): Statement {
  return {
    name: 'webhook_inbox_hold_claim',
    text: `
      update idempotency_keys
         set claim_expires_at = greatest(claim_expires_at, now() + make_interval(secs => $4::float8 / 1000))
       where ${FENCED} and claim_expires_at > now()
      returning claim_expires_at`,
    values: [ref.idempotencyKey, fence.keyAttempts, fence.token, leaseMs],
  };
}

/**
 * An attempt that claimed a key gives up on it: without knowing whether the effect happened (its mark could not be
 * written), or before running it (a delivery that got no slot). The key stops being held, so the next attempt need
 * not wait for the lease to run out. Status unchanged; only its own claim.
 */
export function releaseClaim(ref: EffectRef, fence: ClaimFence): Statement {
  return {
    name: 'webhook_inbox_release_claim',
    text: `update idempotency_keys set claim_expires_at = null where ${FENCED}`,
    values: [ref.idempotencyKey, fence.keyAttempts, fence.token],
  };
}

/** An external effect to mark done: its ref and the claim its attempt holds. */
export interface ClaimedEffect {
  ref: EffectRef;
  fence: ClaimFence;
}

/** A ledger row `completeExternalEffects` marked. */
export interface MarkedRow {
  provider: string;
  event_id: string;
  effect: string;
}

/**
 * External effects, right after they happened: one autocommit statement marks the keys and their ledger rows,
 * each only where the claim is still its attempt's (whether or not its lease ran out meanwhile: nobody else
 * claimed it, so the mark is true). An attempt that lost its claim marks nothing: the key and the ledger row are
 * the new holder's to mark. Returns the ledger rows marked. Keys are locked in key order (`for update`), as
 * `claimExternalEffects` takes them, so two statements over the same keys wait rather than deadlock.
 */
export function completeExternalEffects(effects: readonly ClaimedEffect[]): Statement {
  return {
    name: 'webhook_inbox_complete_externals',
    text: `
      with input as (
        select * from unnest($1::text[], $2::int[], $3::uuid[], $4::text[], $5::text[], $6::text[])
          as t(key, key_attempts, token, provider, event_id, effect)
      ),
      held as (
        select i.* from idempotency_keys k join input i on k.key = i.key
         where k.status = 'claimed' and k.attempts = i.key_attempts and k.claim_token = i.token
         order by k.key
           for update of k
      ),
      k as (
        update idempotency_keys set status = 'completed', completed_at = now(), last_error = null
         where key in (select key from held)
        returning key
      )
      update effect_runs r set status = 'completed', completed_at = now(), last_error = null
        from held h
       where r.provider = h.provider and r.event_id = h.event_id and r.effect = h.effect
         and h.key in (select key from k)
      returning r.provider, r.event_id, r.effect`,
    values: [
      effects.map((e) => e.ref.idempotencyKey),
      effects.map((e) => e.fence.keyAttempts),
      effects.map((e) => e.fence.token),
      effects.map((e) => e.ref.provider),
      effects.map((e) => e.ref.eventId),
      effects.map((e) => e.ref.effect),
    ],
  };
}

/** `completeExternalEffects` for one effect: its ledger row is returned when it was marked. */
export function completeExternalEffect(ref: EffectRef, fence: ClaimFence): Statement {
  return completeExternalEffects([{ ref, fence }]);
}

/**
 * External effect that threw: the claim is released as `failed` (it did not happen, as far as we know), and the
 * ledger row says so; nothing, for an attempt that lost the claim.
 */
export function failExternalEffect(ref: EffectRef, fence: ClaimFence, error: string): Statement {
  return {
    name: 'webhook_inbox_fail_external',
    text: `
      with k as (
        update idempotency_keys set status = 'failed', last_error = $7 where ${FENCED}
        returning key
      )
      update effect_runs set status = 'failed', last_error = $7
       where provider = $4 and event_id = $5 and effect = $6 and status <> 'completed' and exists (select 1 from k)`,
    values: [
      ref.idempotencyKey,
      fence.keyAttempts,
      fence.token,
      ref.provider,
      ref.eventId,
      ref.effect,
      error,
    ],
  };
}

/**
 * A destination's delivery, before it is sent (`deliveries.startDelivery`): claims its key for `leaseMs` with a
 * fresh fencing token, under the same rule as `claimExternalEffects` (a completed key is never claimed again; an
 * unexpired claim is waited for), on `idempotency_keys` alone. Its `effect_runs` row is the fan-out's, completed
 * when the delivery was enqueued: the delivery's own record is this key (status, claims made, last error) and its
 * attempts. As common table expressions (`key_prior`: the key before; `key_claim`: the claim made, no row when
 * none was), made only where `onlyIf` (a condition, SQL) holds; its values added to `params`.
 */
export function keyClaim(params: Params, ref: EffectRef, leaseMs: number, onlyIf: string): string {
  const key = params.add(ref.idempotencyKey);
  return `
      key_prior as (select status, claim_expires_at from idempotency_keys where key = ${key}),
      key_claim as (
        insert into idempotency_keys as k
          (key, effect, provider, event_id, status, attempts, claimed_at, claim_expires_at, claim_token)
        select ${key}, ${params.add(ref.effect)}, ${params.add(ref.provider)}, ${params.add(ref.eventId)}, 'claimed',
               1, now(), now() + make_interval(secs => ${params.add(leaseMs)}::float8 / 1000), gen_random_uuid()
         where ${onlyIf}
        on conflict (key) do update
           set status = 'claimed', attempts = k.attempts + 1, claimed_at = now(),
               claim_expires_at = excluded.claim_expires_at, claim_token = excluded.claim_token, last_error = null
         where k.status <> 'completed'
           and (k.status <> 'claimed' or k.claim_expires_at is null or k.claim_expires_at <= now())
        returning attempts, claim_token
      )`;
}

/**
 * What `keyClaim` did, from its expressions (joined as `key_claim` and `key_prior`), as `KeyClaimColumns`'s
 * columns: the claim's number and token (null when nothing was claimed: the key completed, or held), the key's
 * status before, and until when another attempt holds it (null unless held; meaningful only where the claim was
 * tried).
 */
export const KEY_CLAIM_COLUMNS = `key_claim.attempts as "keyAttempts", key_claim.claim_token::text as "claimToken",
             key_prior.status as "priorStatus",
             case when key_claim.attempts is null and key_prior.status is distinct from 'completed'
                  then greatest(key_prior.claim_expires_at, now()) end as "heldUntil"`;

/** The columns `KEY_CLAIM_COLUMNS` selects. */
export interface KeyClaimColumns {
  keyAttempts: number | null;
  claimToken: string | null;
  priorStatus: IdempotencyKeyStatus | null;
  heldUntil: Date | null;
}

/**
 * A claimed key, after its delivery was answered 2xx: completed, if the claim is still this attempt's. An update
 * for the statement that ends the delivery (`deliveries.ts`), its values added to `params`; returns the key.
 */
export function completeKeyUpdate(params: Params, ref: EffectRef, fence: ClaimFence): string {
  return `update idempotency_keys set status = 'completed', completed_at = now(), last_error = null
           where ${fencedBy(params, ref, fence)}
          returning key`;
}

/**
 * A claimed key whose delivery failed: released as `failed` with its error, if the claim is still this attempt's.
 * An update for the statement that ends the delivery (`deliveries.ts`), its values added to `params`; returns the key.
 */
export function failKeyUpdate(params: Params, ref: EffectRef, fence: ClaimFence, error: string): string {
  return `update idempotency_keys set status = 'failed', last_error = ${params.add(error)}
           where ${fencedBy(params, ref, fence)}
          returning key`;
}

function fencedBy(params: Params, ref: EffectRef, fence: ClaimFence): string {
  return fenced(params.add(ref.idempotencyKey), params.add(fence.keyAttempts), params.add(fence.token));
}

/**
 * Replay with `forceEffect`: forgets the once-only key the effect used for this event (an account-scoped email,
 * say), or the runner would find it used and skip the forced run. Run it before `forceEffect` (effect-runs.ts)
 * in the same transaction.
 */
export function forgetEffectKey(provider: string, eventId: string, effect: string): Statement {
  return {
    text: `
      delete from idempotency_keys
       where key = (select idempotency_key from effect_runs where provider = $1 and event_id = $2 and effect = $3)`,
    values: [provider, eventId, effect],
  };
}

/**
 * The event page: which of these keys another event completed (a scoped effect, once per account say, that an
 * earlier event of the scope ran), with that event's key, so the page links to it rather than show an effect
 * completed in no attempt.
 */
export function selectCompletedByOthers(
  keys: readonly string[],
  provider: string,
  eventId: string,
): Statement {
  return {
    text: `
      select key, provider, event_id as "eventId", completed_at as "completedAt"
        from idempotency_keys
       where key = any($1::text[]) and status = 'completed' and (provider, event_id) <> ($2, $3)`,
    values: [keys, provider, eventId],
  };
}
