/**
 * Destinations as operators see them (docs/destinations.md): each one's state (active, paused, circuit open), its
 * deliveries over a window (success rate, latency percentiles), its backlog and the age of its oldest waiting
 * delivery, its failures grouped by cause; and the operators' pause and resume, each audited in its own
 * transaction. The console, the CLI and the admin API call these.
 */
import { destinationEffect, destinationQueue } from '@webhook-inbox/inbox/destinations';
import { readAllEffectRoutes } from '@webhook-inbox/inbox/effect-routes';
import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import { destinationStates, effectAttempts, effectRoutes, type Statement } from '@webhook-inbox/inbox/sql';
import { inTransaction } from '@webhook-inbox/inbox/transaction';
import type { DestinationState } from '@webhook-inbox/db/statuses';
import type pg from 'pg';
import type { Principal } from './access/roles.ts';
import { auditLog, pgbossJobs } from './sql/index.ts';

/** The window the success rate, the percentiles and the causes cover by default. */
export const DESTINATION_WINDOW_MS = 24 * 3_600_000;

/** A destination's state row (why it is paused or its circuit open, the next probe), and what the window saw. */
export interface DestinationOverview extends destinationStates.DestinationStateRow {
  /** The consumer group whose workers fan its events out (its routes'; the default group without any). */
  group: string;
  /** Deliveries waiting (to run, for a retry, while paused or open) or running. */
  pending: number;
  /** The reception time of the oldest waiting delivery's event. */
  oldestPending: Date | null;
  /** Delivery attempts in the window, and how they ended. */
  attempts: number;
  succeeded: number;
  failed: number;
  dead: number;
  /** Succeeded attempts over all attempts in the window; null without any. */
  successRate: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

export type DestinationFailureCause = effectAttempts.DeliveryFailureCauseRow;

/** No destination of that name has been started by a worker on this database. */
export class DestinationNotFoundError extends Error {
  readonly code = 'destination_not_found';
  readonly destination: string;
  constructor(destination: string) {
    super(`no destination "${destination}": none of that name was started by a worker on this database`);
    this.name = 'DestinationNotFoundError';
    this.destination = destination;
  }
}

async function rows<T extends object>(pool: pg.Pool, statement: Statement): Promise<T[]> {
  return (await pool.query<T>(statement)).rows;
}

/**
 * Every destination a worker started (or the one named `only`), with its state, backlog and deliveries since
 * `since`.
 */
export async function listDestinations(
  pool: pg.Pool,
  since: Date = new Date(Date.now() - DESTINATION_WINDOW_MS),
  only?: string,
): Promise<DestinationOverview[]> {
  const states = await rows<destinationStates.DestinationStateRow>(
    pool,
    only === undefined
      ? destinationStates.selectDestinationStates()
      : destinationStates.selectDestinationState(only),
  );
  if (states.length === 0) return [];
  const names = states.map((s) => s.name);
  const [routes, backlogs, stats] = await Promise.all([
    readAllEffectRoutes(pool),
    rows<pgbossJobs.DestinationBacklogRow>(
      pool,
      pgbossJobs.selectDestinationBacklogs(names.map(destinationQueue)),
    ),
    rows<effectAttempts.DeliveryStatsRow>(
      pool,
      effectAttempts.selectDeliveryStats(names.map(destinationEffect), since),
    ),
  ]);
  return states.map((state) => {
    const backlog = backlogs.find((b) => b.queue === destinationQueue(state.name));
    const stat = stats.find((s) => s.effect === destinationEffect(state.name));
    const attempts = stat?.attempts ?? 0;
    const route = routes.find((r) => r.effect === destinationEffect(state.name));
    return {
      ...state,
      group: route?.consumerGroup ?? DEFAULT_GROUP,
      pending: backlog?.pending ?? 0,
      oldestPending: backlog?.oldestPending ?? null,
      attempts,
      succeeded: stat?.succeeded ?? 0,
      failed: stat?.failed ?? 0,
      dead: stat?.dead ?? 0,
      successRate: attempts > 0 ? (stat?.succeeded ?? 0) / attempts : null,
      p50Ms: stat?.p50Ms ?? null,
      p95Ms: stat?.p95Ms ?? null,
      p99Ms: stat?.p99Ms ?? null,
    };
  });
}

/** One destination and its failures since `since` grouped by cause; throws `DestinationNotFoundError`. */
export async function readDestination(
  pool: pg.Pool,
  name: string,
  since: Date = new Date(Date.now() - DESTINATION_WINDOW_MS),
  causes = 20,
): Promise<{ destination: DestinationOverview; causes: DestinationFailureCause[] }> {
  const [destination] = await listDestinations(pool, since, name);
  if (!destination) throw new DestinationNotFoundError(name);
  return {
    destination,
    causes: await rows<DestinationFailureCause>(
      pool,
      effectAttempts.selectDeliveryFailureCauses(destinationEffect(name), since, causes),
    ),
  };
}

/**
 * The consumer group whose workers fan `name`'s events out (its route's; the default group without one), for an
 * access check before a change. It reads the route alone: the change itself answers `DestinationNotFoundError` for a
 * destination without a state row, and to a principal limited to other groups an unknown destination is one of the
 * default group.
 */
export async function destinationGroup(pool: pg.Pool, name: string): Promise<string> {
  const [route] = await rows<{ consumerGroup: string }>(
    pool,
    effectRoutes.selectEffectGroup(destinationEffect(name)),
  );
  return route?.consumerGroup ?? DEFAULT_GROUP;
}

/** A destination's state after an operator's pause or resume. */
export type DestinationStateAfter = Pick<destinationStates.DestinationStateRow, 'state' | 'reason'>;

/**
 * An operator pauses (`paused` true) or resumes a destination: its state row and the audit row (who, from where,
 * when) commit together. Resuming also closes an open circuit. Returns the state it left; throws
 * `DestinationNotFoundError`.
 */
export async function setDestinationPaused(
  pool: pg.Pool,
  by: Principal,
  name: string,
  paused: boolean,
): Promise<DestinationStateAfter> {
  return await inTransaction(
    pool,
    async (client) => {
      const { rows: before } = await client.query<{ state: DestinationState }>(
        destinationStates.lockDestinationState(name),
      );
      if (!before[0]) throw new DestinationNotFoundError(name);
      const { rows: after } = await client.query<DestinationStateAfter>(
        paused
          ? destinationStates.pauseDestination(name, `paused by ${by.actor}`)
          : destinationStates.resumeDestination(name),
      );
      await client.query(
        auditLog.insertAudit(by, {
          action: paused ? 'destination_paused' : 'destination_resumed',
          target: name,
          details: { before: before[0].state },
        }),
      );
      return after[0]!;
    },
    (error) => error instanceof DestinationNotFoundError,
  );
}
