import type { EventDetail } from '@webhook-inbox/inbox/event-store';
import { eventFactsOf } from '@webhook-inbox/providers/event-facts';
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

// A payload larger than this is not parsed for its facts (the receiver's default body limit is 1 MiB; the page's
// indented text is larger than the body).
const MAX_PARSE = 4 * 1024 * 1024;

/** Where the event comes from, as its provider's payload or headers say (repository, workspace, merchant). */
function providerFacts(event: EventDetailRow): Array<{ label: string; value: string }> {
  let payload: unknown;
  if (event.payload !== null && event.payload.length <= MAX_PARSE) {
    try {
      payload = JSON.parse(event.payload);
    } catch {
      payload = undefined;
    }
  }
  return eventFactsOf(event.provider, payload, event.headers);
}

/**
 * The event's row: its provider's facts, status, attempts, last error (the default group's: without `ownStatus`,
 * for a principal limited to other groups, not shown). The effects poll re-renders it with `outOfBand` (htmx's
 * `hx-swap-oob`), so it changes with the timeline rather than staying as the page was first served.
 */
export function eventFacts(event: EventDetailRow, outOfBand: boolean, ownStatus = true): Html {
  return html`<dl class="facts" id="event-facts" ${outOfBand ? html`hx-swap-oob="true"` : ''}>
    <dt>Type</dt>
    <dd>${event.type}</dd>
    ${providerFacts(event).map(
      (fact) =>
        html`<dt>${fact.label}</dt>
          <dd class="id">${fact.value}</dd>`,
    )}
    ${
      ownStatus
        ? html`<dt>Status</dt>
            <dd>${statusBadge(event.status)}</dd>`
        : ''
    }
    <dt>Received</dt>
    <dd>${utc(event.receivedAt)} (${event.source})</dd>
    ${ownStatus ? ownFacts(event) : ''}
  </dl>`;
}

/** The default group's processing of the event, as its own row holds it. */
function ownFacts(event: EventDetailRow): Html {
  return html`<dt>Processed</dt>
    <dd>${utc(event.processedAt) || '-'}</dd>
    <dt>Attempts</dt>
    <dd>${event.attempts}</dd>
    ${
      event.lastError
        ? html`<dt>${event.status === 'processed' ? 'Error before it was processed' : 'Last error'}</dt>
            <dd class="error-text">${event.lastError}</dd>`
        : ''
    }`;
}
