import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import type { PgBoss } from 'pg-boss';
import type { EventKey } from './event-key.ts';
import type { TraceContext } from './telemetry.ts';

export { DEFAULT_GROUP };

/** The pg-boss queue the receiver feeds and the worker drains. */
export const EVENTS_QUEUE = 'webhook-events';
/** Where a job goes after its last retry. */
export const DEAD_LETTER_QUEUE = 'webhook-events-dead';

/** What a consumer group may be called: it becomes part of its queues' names and a metric label. */
const GROUP_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** What a valid consumer group name looks like, for error messages. */
export const GROUP_NAME_RULE =
  '1-40 characters, a lowercase letter first, then lowercase letters, digits, "_" or "-"';

export function isGroupName(group: string): boolean {
  return GROUP_NAME.test(group);
}

/** Returns `group` when it is a valid consumer group name, else throws a `RangeError` that says what is allowed. */
export function validateGroup(group: string): string {
  if (!isGroupName(group)) {
    throw new RangeError(`invalid consumer group ${JSON.stringify(group)}: ${GROUP_NAME_RULE}`);
  }
  return group;
}

/** A consumer group's two queues: its jobs, and where a job goes after its last retry. */
export interface GroupQueues {
  events: string;
  deadLetters: string;
}

/**
 * The default group keeps the single worker's queue names; another group's are suffixed with `.<group>`. A
 * group name has no `.`, so no group's queue is another's (`webhook-events-dead.x` is never a group's events).
 */
export function queuesOf(group: string): GroupQueues {
  return group === DEFAULT_GROUP
    ? { events: EVENTS_QUEUE, deadLetters: DEAD_LETTER_QUEUE }
    : { events: `${EVENTS_QUEUE}.${group}`, deadLetters: `${DEAD_LETTER_QUEUE}.${group}` };
}

/**
 * A job carries only the event key (the worker reads the event from `webhook_events`) and, when tracing is on,
 * the W3C trace context it was sent in (telemetry.ts).
 */
export interface EventJob extends EventKey {
  /** The trace of the request (or replay) that sent the job; the worker's event span continues it. */
  trace?: TraceContext;
  /** On a replay: the trace of the event's first delivery, which the replay's trace links to. */
  replayOf?: TraceContext;
}

export interface QueueSettings {
  /** Retries after the first attempt before the job is dead-lettered. */
  retryLimit: number;
  /** Seconds before the first retry; doubled each time when `retryBackoff` is on. */
  retryDelay: number;
  retryBackoff: boolean;
  /** Cap on the backoff delay, seconds. */
  retryDelayMax: number;
  /** A job active longer than this is retried, however alive its worker (a bound on one batch). */
  expireInSeconds: number;
  /**
   * A job whose worker has not written its heartbeat for this long is considered lost (the process died or
   * froze) and is retried; null: no heartbeat, only the expiry above. The worker writes it every half of this
   * (pg-boss's `heartbeatSeconds`, at least 10), and its external effects' claims hold their keys for as long
   * (see `claimLeaseMs`). A job carries the value it was sent with.
   */
  heartbeatSeconds: number | null;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = {
  retryLimit: 8,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 15 * 60,
  expireInSeconds: 5 * 60,
  heartbeatSeconds: 10,
};

/** pg-boss's floor for a job heartbeat. */
export const MIN_HEARTBEAT_SECONDS = 10;

// No NOTIFY on send. PostgreSQL serialises every committing transaction that has sent a NOTIFY behind one
// global lock held through its WAL flush, so with `notify` on, the receiver's commits queue one at a time
// (measured: the same insert + job transaction at 431-498/s with it, 1,120-1,320/s without, durable, 16 at a
// time). The worker polls instead (every 0.5 s by default, and at once again while batches come back full),
// which costs a job at most that much pickup latency.
const NOTIFY = false;

/**
 * Creates a group's queues if they do not exist (pg-boss's create_queue is `ON CONFLICT DO NOTHING`, so racing
 * processes are fine).
 */
export async function ensureQueues(
  boss: PgBoss,
  settings: QueueSettings = DEFAULT_QUEUE_SETTINGS,
  group: string = DEFAULT_GROUP,
): Promise<void> {
  const queues = queuesOf(validateGroup(group));
  await boss.createQueue(queues.deadLetters, DEAD_LETTER_OPTIONS);
  const { retryDelayMax, heartbeatSeconds, ...rest } = settings;
  // pg-boss accepts a backoff cap only together with backoff.
  await boss.createQueue(queues.events, {
    ...rest,
    ...(settings.retryBackoff ? { retryDelayMax } : {}),
    ...(heartbeatSeconds === null ? {} : { heartbeatSeconds }),
    deadLetter: queues.deadLetters,
    notify: NOTIFY,
  });
}

// The worker consumes dead letters (it marks the event `dead` and fires `onDead`); the completed jobs stay
// readable (findJobs) for a month.
const DEAD_LETTER_OPTIONS = {
  retentionSeconds: 30 * 24 * 3600,
  deleteAfterSeconds: 30 * 24 * 3600,
  notify: NOTIFY,
} as const;

/**
 * Creates a group's queues if needed and applies `settings` to them: the group's worker owns the retry policy, so it calls
 * this at start and its configuration wins over whatever created the queues first. A job carries the retry and
 * expiry settings it was sent with, so a change applies to jobs sent afterwards.
 */
export async function configureQueues(
  boss: PgBoss,
  settings: QueueSettings,
  group: string = DEFAULT_GROUP,
): Promise<void> {
  await ensureQueues(boss, settings, group);
  const queues = queuesOf(group);
  await boss.updateQueue(queues.deadLetters, DEAD_LETTER_OPTIONS);
  await boss.updateQueue(queues.events, {
    ...settings,
    retryDelayMax: settings.retryBackoff ? settings.retryDelayMax : null,
    deadLetter: queues.deadLetters,
    notify: NOTIFY,
  });
}

/** Checks retry settings (from configuration) before pg-boss sees them, with messages that name the setting. */
export function validateQueueSettings(settings: QueueSettings): QueueSettings {
  const problems: string[] = [];
  if (!Number.isInteger(settings.retryLimit) || settings.retryLimit < 0) {
    problems.push('retryLimit must be an integer >= 0');
  }
  if (!(settings.retryDelay >= 0)) problems.push('retryDelay must be >= 0 seconds');
  if (!(settings.retryDelayMax >= settings.retryDelay)) problems.push('retryDelayMax must be >= retryDelay');
  if (!Number.isInteger(settings.expireInSeconds) || settings.expireInSeconds < 1) {
    problems.push('expireInSeconds must be an integer >= 1');
  }
  const heartbeat = settings.heartbeatSeconds;
  if (heartbeat !== null && (!Number.isInteger(heartbeat) || heartbeat < MIN_HEARTBEAT_SECONDS)) {
    problems.push(`heartbeatSeconds must be null (off) or an integer >= ${MIN_HEARTBEAT_SECONDS}`);
  }
  if (problems.length > 0) throw new RangeError(`invalid queue settings: ${problems.join('; ')}`);
  return settings;
}
