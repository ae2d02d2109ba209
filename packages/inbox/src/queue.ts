import type { PgBoss } from 'pg-boss';

/** The pg-boss queue the receiver feeds and the worker drains. */
export const EVENTS_QUEUE = 'webhook-events';
/** Where a job goes after its last retry. */
export const DEAD_LETTER_QUEUE = 'webhook-events-dead';

/** A job carries only the event key; the worker reads the event from `webhook_events`. */
export interface EventJob {
  provider: string;
  eventId: string;
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

/**
 * Creates the queues if they do not exist (pg-boss's create_queue is `ON CONFLICT DO NOTHING`, so racing
 * processes are fine). `notify` lets a worker using LISTEN/NOTIFY pick a job up the moment it commits.
 */
export async function ensureQueues(
  boss: PgBoss,
  settings: QueueSettings = DEFAULT_QUEUE_SETTINGS,
): Promise<void> {
  await boss.createQueue(DEAD_LETTER_QUEUE, { retentionSeconds: 30 * 24 * 3600 });
  await boss.createQueue(EVENTS_QUEUE, { ...settings, deadLetter: DEAD_LETTER_QUEUE, notify: true });
}
