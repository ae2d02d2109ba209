import type { PgBoss } from 'pg-boss';
import type { TraceContext } from './telemetry.ts';

/** The pg-boss queue the receiver feeds and the worker drains. */
export const EVENTS_QUEUE = 'webhook-events';
/** Where a job goes after its last retry. */
export const DEAD_LETTER_QUEUE = 'webhook-events-dead';

/**
 * A job carries only the event key (the worker reads the event from `webhook_events`) and, when tracing is on,
 * the W3C trace context it was sent in (telemetry.ts).
 */
export interface EventJob {
  provider: string;
  eventId: string;
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
  /** A job active longer than this is considered lost (its worker died) and is retried. */
  expireInSeconds: number;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = {
  retryLimit: 8,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 15 * 60,
  expireInSeconds: 5 * 60,
};

// No NOTIFY on send. PostgreSQL serialises every committing transaction that has sent a NOTIFY behind one
// global lock held through its WAL flush, so with `notify` on, the receiver's commits queue one at a time
// (measured: the same insert + job transaction at 431-498/s with it, 1,120-1,320/s without, durable, 16 at a
// time). The worker polls instead (every 0.5 s by default, and at once again while batches come back full),
// which costs a job at most that much pickup latency.
const NOTIFY = false;

/**
 * Creates the queues if they do not exist (pg-boss's create_queue is `ON CONFLICT DO NOTHING`, so racing
 * processes are fine).
 */
export async function ensureQueues(
  boss: PgBoss,
  settings: QueueSettings = DEFAULT_QUEUE_SETTINGS,
): Promise<void> {
  await boss.createQueue(DEAD_LETTER_QUEUE, DEAD_LETTER_OPTIONS);
  const { retryDelayMax, ...rest } = settings;
  // pg-boss accepts a backoff cap only together with backoff.
  await boss.createQueue(EVENTS_QUEUE, {
    ...rest,
    ...(settings.retryBackoff ? { retryDelayMax } : {}),
    deadLetter: DEAD_LETTER_QUEUE,
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
 * Creates the queues if needed and applies `settings` to them: the worker owns the retry policy, so it calls
 * this at start and its configuration wins over whatever created the queues first. A job carries the retry and
 * expiry settings it was sent with, so a change applies to jobs sent afterwards.
 */
export async function configureQueues(boss: PgBoss, settings: QueueSettings): Promise<void> {
  await ensureQueues(boss, settings);
  await boss.updateQueue(DEAD_LETTER_QUEUE, DEAD_LETTER_OPTIONS);
  await boss.updateQueue(EVENTS_QUEUE, {
    ...settings,
    retryDelayMax: settings.retryBackoff ? settings.retryDelayMax : null,
    deadLetter: DEAD_LETTER_QUEUE,
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
  if (problems.length > 0) throw new RangeError(`invalid queue settings: ${problems.join('; ')}`);
  return settings;
}
