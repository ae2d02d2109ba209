import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { EffectLookup } from '@webhook-inbox/inbox/effect-routes';
import type { Principal } from './access/roles.ts';
import { CodedError } from '@webhook-inbox/inbox/errors';
import {
  DEFAULT_GROUP,
  EVENTS_QUEUE,
  queuesOf,
  validateGroup,
  type EventJob,
} from '@webhook-inbox/inbox/queue';
import { effectRuns, idempotencyKeys, webhookEventGroups, webhookEvents } from '@webhook-inbox/inbox/sql';
import { auditLog, pgbossJobs } from './sql/index.ts';
import { jobTraceContext, type TraceContext } from '@webhook-inbox/inbox/telemetry';
import { inTransaction } from '@webhook-inbox/inbox/transaction';

/**
 * Operator replay: puts an event back on a consumer group's queue (the default group's unless told), as the
 * receiver does. The effect ledger decides what runs, so a replay re-runs only the effects that have not
 * completed; `forceEffect` re-runs one completed effect on purpose and is recorded as such
 * (`effect_runs.forced_at`). Replaying an event for a group it was never delivered to (it was received before
 * the group's worker first started) creates its group row: that is how a group backfills.
 */

export interface ReplayOptions {
  /**
   * The consumer group whose effects are replayed (default: the default group). `effectsFor` must be that
   * group's lookup (`loadEffectLookup(pool, group)`).
   */
  group?: string;
  /** Re-run this effect even though it completed. Must be registered for the event's type. */
  forceEffect?: string;
  /** Report what would run; change nothing. */
  dryRun?: boolean;
  /**
   * Who replays: the replay's audit row (`replay`, or `replay_forced` with a forced effect) is written in its
   * transaction, so the change and its record commit together. A replay with nothing left to run changes nothing
   * but is an operator's action all the same: its `replay` row says `outcome: "nothing_to_replay"`. A dry run
   * writes none.
   */
  auditAs?: Principal;
  /**
   * Whether a replay with nothing left to run writes its audit row (default true). A bulk replay passes false: its
   * request is recorded once, with its counts, rather than once per finished event it passes over.
   */
  auditNothingToReplay?: boolean;
}

export interface ReplayResult {
  provider: string;
  eventId: string;
  type: string;
  /** The consumer group it was replayed for. */
  group: string;
  /** The event's status in that group before the replay; `none` when the group never had the event. */
  previousStatus: string;
  /**
   * Effects that will run (or would, in a dry run): registered minus completed, plus a forced one. Null when the
   * caller does not know the registry (the receiver's admin API): the worker's ledger still decides.
   */
  effects: string[] | null;
  forced: string | null;
  /** True when a job was sent; false for a dry run or when nothing is left to run. */
  enqueued: boolean;
  dryRun: boolean;
}

export class ReplayError extends CodedError<'not_found' | 'unknown_effect'> {
  override name = 'ReplayError';
}

export interface ReplayDeps {
  pool: pg.Pool;
  /** A started pg-boss; the job is sent in the replay's transaction. */
  boss: PgBoss;
  /** The product's effect registry; without it a replay cannot list effects and always enqueues. */
  effectsFor?: EffectLookup;
}

export async function replayEvent(
  { pool, boss, effectsFor }: ReplayDeps,
  provider: string,
  eventId: string,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const group = validateGroup(options.group ?? DEFAULT_GROUP);
  // A refused replay (not found, unknown effect) leaves its connection healthy.
  return inTransaction(
    pool,
    async (client) => {
      const event = await lockForReplay(client, provider, eventId, group);
      if (!event) throw new ReplayError('not_found', `no ${provider} event ${eventId}`);

      const registered = effectsFor?.(provider, event.type);
      const completed = new Set(
        (
          await client.query<{ effect: string }>(effectRuns.selectCompletedEffects(provider, eventId))
        ).rows.map((r) => r.effect),
      );
      const forced = options.forceEffect ?? null;
      // Without the registry, only an effect that completed for this event can be forced (nothing else to re-run).
      const known = registered ?? [...completed];
      if (forced !== null && !known.includes(forced)) {
        throw new ReplayError(
          'unknown_effect',
          registered
            ? `effect "${forced}" is not registered for ${provider} ${event.type}; registered: ${registered.join(', ') || 'none'}`
            : `effect "${forced}" has not completed for this event; completed: ${[...completed].join(', ') || 'none'}`,
        );
      }
      const effects = registered
        ? registered.filter((name) => !completed.has(name) || name === forced)
        : null;
      const result: ReplayResult = {
        provider,
        eventId,
        type: event.type,
        group,
        previousStatus: event.status,
        effects,
        forced,
        enqueued: false,
        dryRun: options.dryRun ?? false,
      };
      if (options.dryRun) return result; // Nothing written: the commit only releases the locks.
      const target = `${provider} ${eventId}`;
      if (effects?.length === 0) {
        if (options.auditAs && options.auditNothingToReplay !== false) {
          await client.query(
            auditLog.insertAudit(options.auditAs, {
              action: 'replay',
              target,
              details: { group, forced, effects, previousStatus: event.status, outcome: 'nothing_to_replay' },
              group,
            }),
          );
        }
        return result;
      }

      if (forced !== null && completed.has(forced)) {
        await client.query(idempotencyKeys.forgetEffectKey(provider, eventId, forced));
        await client.query(effectRuns.forceEffect(provider, eventId, forced));
      }
      await client.query(
        group === DEFAULT_GROUP
          ? webhookEvents.requeueEvent(provider, eventId)
          : webhookEventGroups.requeueGroupEvent(provider, eventId, group),
      );
      // A replay is a trace of its own (the caller's, when it traces), linked to the first delivery's.
      const first = await client.query<{ trace: TraceContext }>(
        pgbossJobs.selectFirstJobTrace(EVENTS_QUEUE, provider, eventId),
      );
      const replayOf = first.rows[0]?.trace;
      const job: EventJob = { provider, eventId, ...jobTraceContext(), ...(replayOf ? { replayOf } : {}) };
      await boss.send(queuesOf(group).events, job, {
        db: { executeSql: (text: string, values?: unknown[]) => client.query(text, values) },
      });
      if (options.auditAs) {
        await client.query(
          auditLog.insertAudit(options.auditAs, {
            action: forced === null ? 'replay' : 'replay_forced',
            target,
            details: { group, forced, effects, previousStatus: event.status },
            group,
          }),
        );
      }
      return { ...result, enqueued: true };
    },
    (error) => error instanceof ReplayError,
  );
}

/**
 * Locks what a replay changes: for the default group the event's row (a replay and the worker settling the same
 * event take turns); for another group the event's key (against retention) and the group's row, whose status is
 * `none` when the group never had the event.
 */
async function lockForReplay(
  client: pg.PoolClient,
  provider: string,
  eventId: string,
  group: string,
): Promise<{ type: string; status: string } | undefined> {
  if (group === DEFAULT_GROUP) {
    return (await client.query<{ type: string; status: string }>(webhookEvents.lockEvent(provider, eventId)))
      .rows[0];
  }
  const event = (await client.query<{ type: string }>(webhookEventGroups.lockEventKey(provider, eventId)))
    .rows[0];
  if (!event) return undefined;
  const row = (
    await client.query<{ status: string }>(webhookEventGroups.lockGroupRow(provider, eventId, group))
  ).rows[0];
  return { type: event.type, status: row?.status ?? 'none' };
}
