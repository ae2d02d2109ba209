/** The pg-boss queue the receiver feeds and the worker drains. */
export const EVENTS_QUEUE = 'webhook-events';
/** Where a job goes after its last retry. */
export const DEAD_LETTER_QUEUE = 'webhook-events-dead';

/** A job carries only the event key; the worker reads the event from `webhook_events`. */
export interface EventJob {
  provider: string;
  eventId: string;
}
