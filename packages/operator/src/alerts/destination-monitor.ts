import { destinationEffect } from '@webhook-inbox/inbox/destinations';
import { errorLine } from '@webhook-inbox/inbox/error-text';
import { destinationStates, effectAttempts } from '@webhook-inbox/inbox/sql';
import type pg from 'pg';
import type { Alerter, AlertLogger } from './alerter.ts';
import type { DestinationAlert } from './model.ts';

type Cause = destinationStates.DestinationAlertCause;

/** When a destination's deliveries are failing enough to alert (the worker's `ALERT_DESTINATION_*` variables). */
export interface DestinationFailureRate {
  /** Failed attempts over all attempts in the window, 0 to 1, at or over which the destination is failing. */
  threshold: number;
  /** Fewer attempts than this in the window say nothing (a single failure is not a rate). */
  minAttempts: number;
  windowMs: number;
}

export interface DestinationMonitorOptions {
  pool: pg.Pool;
  alerter: Pick<Alerter, 'notify'>;
  /** The destinations to watch (a worker's: its consumer group's), with that group. */
  destinations: ReadonlyArray<{ name: string; group: string }>;
  failureRate: DestinationFailureRate;
  logger: AlertLogger;
  /** How often the states and rates are read. Default 10 s. */
  intervalMs?: number;
}

export interface DestinationMonitor {
  /** One look at every watched destination: alerts for the episodes that began, ends those that ended. */
  check(): Promise<void>;
  /** Stops the timer and waits for a look under way. */
  close(): Promise<void>;
}

const KINDS: Record<Cause, DestinationAlert['kind']> = {
  open: 'destination_open',
  paused: 'destination_paused',
  failure_rate: 'destination_failure_rate',
};

function formatWindow(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}

/**
 * Watches destinations and raises one alert per episode (docs/destinations.md#alerts): the circuit open, paused (a
 * 410 Gone or an operator), or the failure rate of the last `failureRate.windowMs` at or over its threshold. An
 * episode's one alert is claimed in `destination_states.alerted` by a single statement, so several workers of a
 * group watching one destination send one alert between them, and a restart sends none again; an episode ends when
 * its cause is gone (the circuit closed, the destination resumed, the rate under the threshold).
 *
 * Reads the database every `intervalMs` (two statements for all the destinations, on `destination_states` and the
 * `effect_attempts` index); an episode shorter than that can pass unseen, a circuit open for less than its
 * `probeAfter` never does.
 *
 * @example
 * const monitor = startDestinationMonitor({ pool, alerter, destinations, failureRate, logger });
 * // at shutdown, before alerter.close()
 * await monitor.close();
 */
export function startDestinationMonitor(options: DestinationMonitorOptions): DestinationMonitor {
  const { pool, alerter, failureRate, logger } = options;
  const intervalMs = options.intervalMs ?? 10_000;
  const watched = new Map(options.destinations.map((d) => [d.name, d.group]));
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  async function causeOf(name: string, cause: Cause, reason: string, since: Date): Promise<string> {
    if (cause !== 'failure_rate') return reason;
    const [{ rows: stats }, { rows: causes }] = await Promise.all([
      pool.query<effectAttempts.DeliveryStatsRow>(
        effectAttempts.selectDeliveryStats([destinationEffect(name)], since),
      ),
      pool.query<effectAttempts.DeliveryFailureCauseRow>(
        effectAttempts.selectDeliveryFailureCauses(destinationEffect(name), since, 1),
      ),
    ]);
    const stat = stats[0];
    const failed = (stat?.failed ?? 0) + (stat?.dead ?? 0);
    const figures =
      `${failed} of ${stat?.attempts ?? 0} attempts failed in the last ${formatWindow(failureRate.windowMs)} ` +
      `(threshold ${Math.round(failureRate.threshold * 100)}%)`;
    return causes[0] ? `${figures}, most often: ${causes[0].sampleError}` : figures;
  }

  async function look(): Promise<void> {
    const since = new Date(Date.now() - failureRate.windowMs);
    const names = [...watched.keys()];
    const [{ rows: states }, { rows: stats }] = await Promise.all([
      pool.query<destinationStates.DestinationStateRow>(destinationStates.selectDestinationStates()),
      pool.query<effectAttempts.DeliveryStatsRow>(
        effectAttempts.selectDeliveryStats(names.map(destinationEffect), since),
      ),
    ]);
    for (const state of states) {
      const group = watched.get(state.name);
      if (group === undefined) continue;
      const stat = stats.find((s) => s.effect === destinationEffect(state.name));
      const attempts = stat?.attempts ?? 0;
      const failing =
        attempts >= failureRate.minAttempts &&
        ((stat?.failed ?? 0) + (stat?.dead ?? 0)) / attempts >= failureRate.threshold;
      const holding: Record<Cause, boolean> = {
        open: state.state === 'open',
        paused: state.state === 'paused',
        failure_rate: failing,
      };
      const ended = (Object.keys(holding) as Cause[]).filter((cause) => !holding[cause]);
      if (ended.length > 0) await pool.query(destinationStates.endAlertEpisodes(state.name, ended));
      for (const cause of (Object.keys(holding) as Cause[]).filter((c) => holding[c])) {
        const { rows: claimed } = await pool.query<{ reason: string | null }>(
          destinationStates.claimAlertEpisode(state.name, cause),
        );
        if (!claimed[0]) continue;
        // Claimed: the alert goes out whatever happens next; without its figures if they cannot be read.
        const reason =
          claimed[0].reason ?? (cause === 'failure_rate' ? 'failure rate over its threshold' : cause);
        const text = await causeOf(state.name, cause, reason, since).catch(() => reason);
        alerter.notify({ kind: KINDS[cause], destination: state.name, group, cause: text });
      }
    }
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      running = check().finally(() => {
        running = undefined;
        schedule();
      });
    }, intervalMs);
    timer.unref();
  }

  async function check(): Promise<void> {
    try {
      await look();
    } catch (error) {
      // The next look tries again. A worker that dies between an episode's claim and its alert loses that alert.
      logger.warn({ err: errorLine(error) }, 'destination alerts: could not read the destinations');
    }
  }

  if (watched.size > 0) schedule();
  return {
    check,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}
