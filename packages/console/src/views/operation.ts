import type { replayOperations } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import type { FilterForm } from '../filter.ts';
import { count, utc } from './format.ts';
import { csrfField, statusBadge, type Html } from './layout.ts';

/** A bulk replay operation's views: its progress, where its replayed events are now, what it replays. */

/** A selection's events named on the operation's page; the rest counted. */
const CHOSEN_NAMED = 5;

/** An operation's stored filter: the form's given fields (`/bulk`), or a selection's keys and group. */
type StoredFilter = Partial<FilterForm> & { keys?: Array<[string, string]> };

export interface OperationRow {
  id: number;
  filter: StoredFilter;
  /** Its consumer group: the filter's, or the default group. */
  group: string;
  receivedUpTo: Date;
  status: string;
  total: number;
  done: number;
  enqueued: number;
  failed: number;
  lastError: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  cancelledBy: string | null;
}

/** Where the replayed events are now: processed, still failing, dead, each linked to its events. */
export function outcomeLine(
  base: string,
  id: number,
  outcome: replayOperations.OutcomeRow | undefined,
): Html {
  if (!outcome) return html`<span class="outcome">none replayed yet</span>`;
  const link = (key: 'processed' | 'failing' | 'dead', label: string) =>
    outcome[key] > 0
      ? html`<a href="${base}/operations/${id}/events?outcome=${key}">${count(outcome[key])} ${label}</a>`
      : html`0 ${label}`;
  return html`<span class="outcome"
    >${link('processed', 'processed')}, ${link('failing', 'still failing or waiting')},
    ${link('dead', 'dead')}${outcome.gone ? `, ${count(outcome.gone)} purged` : ''}</span
  >`;
}

/** `csrf` is given when the viewer may cancel: the cancel button is shown only then. */
export function progress(
  base: string,
  o: OperationRow,
  csrf: string | undefined,
  outcome?: replayOperations.OutcomeRow,
): Html {
  const unfinished = o.status === 'pending' || o.status === 'running';
  // After the operation, while replayed events are still on their way, the outcome keeps moving.
  const polling =
    unfinished || (outcome?.failing ?? 0) > 0
      ? html`hx-get="${base}/operations/${o.id}/progress" hx-trigger="every 1s" hx-swap="outerHTML"`
      : '';
  const remaining = Math.max(o.total - o.done, 0);
  return html`<section id="progress" class="progress" ${polling} aria-live="polite">
    <p>
      ${statusBadge(o.status)} <strong class="done">${count(o.done)}</strong> of
      <span class="total">${count(o.total)}</span> replayed (${count(o.enqueued)} queued, ${count(o.failed)}
      skipped)
    </p>
    <p>Outcome now: ${outcomeLine(base, o.id, outcome)}</p>
    <progress
      max="${Math.max(o.total, 1)}"
      value="${Math.min(o.done, Math.max(o.total, 1))}"
      aria-label="Bulk replay progress"
    ></progress>
    ${
      o.status === 'completed' && o.done < o.total
        ? html`<p class="notice">
            ${count(remaining)} of the events counted at the start no longer matched the filter when their
            turn came (a worker had processed them meanwhile).
          </p>`
        : ''
    }
    ${
      o.status === 'cancelled'
        ? html`<p class="warning">
            Cancelled by ${o.cancelledBy ?? '?'} at ${utc(o.finishedAt)}; ${count(remaining)} events were not
            replayed.
          </p>`
        : ''
    }
    ${o.lastError ? html`<p class="error-text">Last error: ${o.lastError}</p>` : ''}
    ${o.finishedAt ? html`<p>Finished ${utc(o.finishedAt)}.</p>` : ''}
    ${
      unfinished && csrf
        ? html`<form method="post" action="${base}/operations/${o.id}/cancel" class="inline">
            ${csrfField(csrf)}
            <button type="submit" class="danger">Cancel this bulk replay</button>
          </form>`
        : ''
    }
  </section>`;
}

/** What the operation replays: its filter's fields, or the events an operator chose (and their group). */
export function describeFilter(filter: StoredFilter): string {
  const { keys, ...fields } = filter;
  if (keys) {
    const named = keys.slice(0, CHOSEN_NAMED).map(([provider, eventId]) => `${provider} ${eventId}`);
    const more = keys.length > CHOSEN_NAMED ? `, and ${count(keys.length - CHOSEN_NAMED)} more` : '';
    const group = fields.group ? ` in group ${fields.group}` : '';
    return `${count(keys.length)} chosen event${keys.length === 1 ? '' : 's'}${group}: ${named.join(', ')}${more}`;
  }
  const parts = Object.entries(fields)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(', ') : 'every event';
}
