import { sqlList, UNFINISHED_STATUSES } from '@webhook-inbox/db/statuses';
import type { Statement } from './statement.ts';

/**
 * Statements on `effect_runs` (the effect ledger: one row per event + effect) for the event log and replay. The
 * effect runner's own (claims, completions, failures) are in `../effects/ledger.ts`.
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
