import type { Statement } from './statement.ts';

/**
 * Statements on `idempotency_keys` (claims of external effects, keys of scoped effects) outside the effect
 * runner, whose own are in `../effects/ledger.ts`.
 */

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
