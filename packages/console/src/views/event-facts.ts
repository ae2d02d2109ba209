import type { EventDetail } from '@webhook-inbox/inbox/event-store';
import { html } from 'hono/html';
import { utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';

/** An event's row as the event page reads it: its summary, headers and payload (PostgreSQL's indented text). */
export interface EventDetailRow extends Omit<
  EventDetail,
  'payload' | 'effects' | 'attemptHistory' | 'groups'
> {
  payload: string | null;
}

/**
 * The event's row: status, attempts, last error. The effects poll re-renders it with `outOfBand` (htmx's
 * `hx-swap-oob`), so it changes with the timeline rather than staying as the page was first served.
 */
export function eventFacts(event: EventDetailRow, outOfBand: boolean): Html {
  return html`<dl class="facts" id="event-facts" ${outOfBand ? html`hx-swap-oob="true"` : ''}>
    <dt>Type</dt>
    <dd>${event.type}</dd>
    <dt>Status</dt>
    <dd>${statusBadge(event.status)}</dd>
    <dt>Received</dt>
    <dd>${utc(event.receivedAt)} (${event.source})</dd>
    <dt>Processed</dt>
    <dd>${utc(event.processedAt) || '-'}</dd>
    <dt>Attempts</dt>
    <dd>${event.attempts}</dd>
    ${
      event.lastError
        ? html`<dt>${event.status === 'processed' ? 'Error before it was processed' : 'Last error'}</dt>
            <dd class="error-text">${event.lastError}</dd>`
        : ''
    }
  </dl>`;
}
