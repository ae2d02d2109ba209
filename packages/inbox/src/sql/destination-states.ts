import type { DestinationState } from '@webhook-inbox/db/statuses';
import { Params, type Statement } from './statement.ts';

/**
 * Statements on `destination_states`: each destination's state, written by the workers that deliver to it (the
 * circuit breaker, a 410's pause) and by operators (pause, resume), read by every delivery and by the CLI. One row
 * per destination, updated in place by single statements, so workers of one destination share one breaker.
 */

export interface DestinationStateRow {
  name: string;
  url: string;
  state: DestinationState;
  reason: string | null;
  consecutiveFailures: number;
  probeAt: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
}

const COLUMNS = `name, url, state, reason, consecutive_failures as "consecutiveFailures", probe_at as "probeAt",
  last_success_at as "lastSuccessAt", last_failure_at as "lastFailureAt"`;

/** At a worker's start: a row per destination it delivers to (its URL refreshed); a known state stays. */
export function registerDestinations(destinations: ReadonlyArray<{ name: string; url: string }>): Statement {
  return {
    text: `
      insert into destination_states (name, url)
      select * from unnest($1::text[], $2::text[]) order by 1
      on conflict (name) do update set url = excluded.url, updated_at = now()`,
    values: [destinations.map((d) => d.name), destinations.map((d) => d.url)],
  };
}

export function selectDestinationStates(): Statement {
  return { text: `select ${COLUMNS} from destination_states order by name`, values: [] };
}

export function selectDestinationState(name: string): Statement {
  return { text: `select ${COLUMNS} from destination_states where name = $1`, values: [name] };
}

/**
 * A destination's state as a delivery reads it before sending (null without a row: no worker registered it yet),
 * `probe` true when it took the circuit's probe.
 */
export interface DeliveryGate {
  state: DestinationState | null;
  probeAt: Date | null;
  probe: boolean;
}

/**
 * The gate a delivery passes before it sends, as common table expressions (`gate_probe`, `gate`, one row, its
 * values added to `params`). While the circuit is open and its probe is due, the one delivery whose statement moves
 * `probe_at` on takes the probe (`probe` true) and is sent; the others wait for the next probe.
 */
export function deliveryGate(params: Params, name: string, probeAfterMs: number): string {
  const [at, probeMs] = [params.add(name), params.add(probeAfterMs)];
  return `
      gate_probe as (
        update destination_states set probe_at = now() + make_interval(secs => ${probeMs}::float8 / 1000)
         where name = ${at} and state = 'open' and probe_at <= now()
        returning name
      ),
      gate as (
        select s.state, s.probe_at as "probeAt", exists (select from gate_probe) as probe
          from (select) one left join destination_states s on s.name = ${at}
      )`;
}

/**
 * A 2xx, as an update for a statement that records the whole answer (its values added to `params`): the failures in
 * a row start again from 0, and an open circuit closes; a paused destination stays paused. A destination already
 * active without failures is written at most once a second (`last_success_at`), so that concurrent deliveries do
 * not queue on its row for a change that changes nothing.
 */
export function deliverySuccessUpdate(params: Params, name: string): string {
  return `
      update destination_states
         set consecutive_failures = 0, last_success_at = now(), updated_at = now(),
             state = case when state = 'open' then 'active' else state end,
             reason = case when state = 'open' then null else reason end,
             alerted = case when state = 'open' then array_remove(alerted, 'open') else alerted end,
             probe_at = case when state = 'open' then null else probe_at end
       where name = ${params.add(name)}
         and (state = 'open' or consecutive_failures > 0 or last_success_at is null
              or last_success_at < now() - interval '1 second')
      returning state`;
}

/**
 * A failed delivery, as an update for a statement that records the whole failure (its values added to `params`):
 * one more failure in a row; at `threshold` the circuit opens (deliveries wait until `probe_at`), and a failed
 * probe keeps it open for another `probeAfterMs`. Returns the state after.
 */
export function deliveryFailureUpdate(
  params: Params,
  name: string,
  threshold: number,
  probeAfterMs: number,
  cause: string,
): string {
  const [at, opensAt, probeMs, last] = [name, threshold, probeAfterMs, cause].map((value) =>
    params.add(value),
  );
  return `
      update destination_states
         set consecutive_failures = consecutive_failures + 1, last_failure_at = now(), updated_at = now(),
             state = case when state = 'active' and consecutive_failures + 1 >= ${opensAt}::int then 'open' else state end,
             probe_at = case when state = 'open' or (state = 'active' and consecutive_failures + 1 >= ${opensAt}::int)
                             then now() + make_interval(secs => ${probeMs}::float8 / 1000) else probe_at end,
             reason = case when state = 'active' and consecutive_failures + 1 >= ${opensAt}::int
                           then (consecutive_failures + 1) || ' failures in a row, the last: ' || ${last}::text
                           else reason end
       where name = ${at}
      returning state`;
}

/** An operator's pause or resume: the row's state before, locked until the change commits. */
export function lockDestinationState(name: string): Statement {
  return { text: `select state from destination_states where name = $1 for update`, values: [name] };
}

/**
 * The rate limit, shared by every worker of the destination: reserves the next start (the later of `next_start_at`
 * and the database's clock) and moves `next_start_at` one interval (`intervalMs`) past it. Returns how long the
 * delivery waits for its start, measured on the database's clock, so workers' clocks need not agree. Starts are
 * evenly spaced, without burst, however many workers ask.
 */
export function reserveStart(name: string, intervalMs: number): Statement {
  return {
    name: 'webhook_inbox_destination_reserve_start',
    text: `
      with now as (select clock_timestamp() as at)
      update destination_states
         set next_start_at = greatest(next_start_at, (select at from now)) + make_interval(secs => $2::float8 / 1000)
       where name = $1
      returning greatest(0, extract(epoch from next_start_at - (select at from now)) * 1000 - $2::float8)::float8
             as "waitMs"`,
    values: [name, intervalMs],
  };
}

/** Paused (a 410 Gone, or an operator): nothing is delivered until `resumeDestination`. Returns the state. */
export function pauseDestination(name: string, reason: string): Statement {
  const params = new Params();
  return { text: pauseUpdate(params, name, reason), values: params.values };
}

/** `pauseDestination`'s update, its values added to `params`: for a statement that records a 410 with it. */
export function pauseUpdate(params: Params, name: string, reason: string): string {
  return `update destination_states set state = 'paused', reason = ${params.add(reason)}, updated_at = now()
           where name = ${params.add(name)}
          returning state, reason`;
}

/** Active again, its circuit closed; returns the state. */
export function resumeDestination(name: string): Statement {
  return {
    text: `
      update destination_states
         set state = 'active', reason = null, probe_at = null, consecutive_failures = 0, updated_at = now(),
             alerted = array_remove(array_remove(alerted, 'paused'), 'open')
       where name = $1
      returning state, reason`,
    values: [name],
  };
}

/**
 * What a destination's alert is about: its circuit open, paused (a 410 or an operator), or its recent failure rate
 * at or over the threshold. One alert per episode: from the cause's start to its end.
 */
export type DestinationAlertCause = 'open' | 'paused' | 'failure_rate';

/**
 * Claims the one alert of a destination's episode of `cause`: a row (the destination's reason) only for the one
 * statement that adds the cause, whichever worker runs it first; none while the episode was already alerted on.
 */
export function claimAlertEpisode(name: string, cause: DestinationAlertCause): Statement {
  return {
    name: 'webhook_inbox_claim_destination_alert',
    text: `
      update destination_states set alerted = array_append(alerted, $2)
       where name = $1 and not ($2 = any(alerted))
      returning reason`,
    values: [name, cause],
  };
}

/**
 * Ends a destination's episodes of `causes` (their next occurrence is alerted again); writes nothing when none is
 * open. Resuming and a closing circuit end theirs in their own statements, so a quick cycle is never missed.
 */
export function endAlertEpisodes(name: string, causes: readonly DestinationAlertCause[]): Statement {
  return {
    name: 'webhook_inbox_end_destination_alerts',
    text: `
      update destination_states
         set alerted = array(select unnest(alerted) except select unnest($2::text[]))
       where name = $1 and alerted && $2::text[]`,
    values: [name, causes],
  };
}
