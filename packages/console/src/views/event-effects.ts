import { SETTLED_STATUSES } from '@webhook-inbox/db/statuses';
import type { CompletedByRow, EffectRunRow, EventSummary } from '@webhook-inbox/inbox/event-store';
import { html } from 'hono/html';
import { eventLink, searchParams, utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';

/**
 * Each effect's ledger row as a timeline. While the event is not settled (processed or dead), the list reloads
 * itself every 2 seconds, so a replay is seen turning completed without reloading the page.
 */
export function effectsTimeline(
  base: string,
  event: EventSummary,
  runs: EffectRunRow[],
  notStarted: string[],
  options: {
    /** The viewer may force a completed effect: its button is shown. */
    canForce: boolean;
    /** The events that completed some of these effects' keys for this one (their scope's), by effect. */
    completedBy?: readonly CompletedByRow[];
  },
): Html {
  const { provider, eventId } = event;
  const settled = (SETTLED_STATUSES as readonly string[]).includes(event.status);
  const polling = settled
    ? ''
    : html`hx-get="${base}/event/effects?${searchParams({ provider, id: eventId })}" hx-trigger="every 2s"
      hx-swap="outerHTML"`;
  const forceHref = (effect: string) =>
    `${base}/event/force?${searchParams({ provider, id: eventId, effect })}`;
  if (runs.length === 0 && notStarted.length === 0) {
    return html`<div id="effects" ${polling}><p class="empty">No effect has run yet.</p></div>`;
  }
  return html`<div id="effects" ${polling} aria-live="polite">
    <p class="hint">Event ${statusBadge(event.status)}</p>
    <ol class="timeline">
      ${[...runs].sort(inStartOrder).map(
        (r) =>
          html`<li class="effect status-${r.status}">
            <div class="effect-head">
              <strong>${r.effect}</strong> ${statusBadge(r.status)}
              ${attemptsOrCompleter(
                base,
                r,
                options.completedBy?.find((by) => by.effect === r.effect),
              )}
              ${r.forcedAt ? html`<span class="badge forced">forced ${utc(r.forcedAt)}</span>` : ''}
            </div>
            <ul class="steps">
              ${r.startedAt ? html`<li><time>${utc(r.startedAt)}</time> started</li>` : ''}
              ${r.lastError ? html`<li class="error-text">last error: ${r.lastError}</li>` : ''}
              ${r.completedAt ? html`<li><time>${utc(r.completedAt)}</time> completed</li>` : ''}
            </ul>
            <p class="key">once-only key <code>${r.idempotencyKey}</code></p>
            ${
              r.status === 'completed' && options.canForce
                ? html`<a class="button secondary" href="${forceHref(r.effect)}"
                    >Force ${r.effect} to run again…</a
                  >`
                : ''
            }
          </li>`,
      )}
      ${notStarted.map(
        (name) =>
          html`<li class="effect">
            <div class="effect-head"><strong>${name}</strong> <span class="badge">not started</span></div>
          </li>`,
      )}
    </ol>
  </div>`;
}

/** How many attempts the effect took, or, when another event of its scope completed it, which one. */
function attemptsOrCompleter(base: string, run: EffectRunRow, by: CompletedByRow | undefined): Html {
  if (run.status === 'completed' && by) {
    return html`<span class="completed-by"
      >completed by
      ${eventLink(base, by.provider, by.eventId)}${by.completedAt ? html` at ${utc(by.completedAt)}` : ''}</span
    >`;
  }
  return html`<span>${run.attempts} attempt${run.attempts === 1 ? '' : 's'}</span>`;
}

/** The order effects started in; those not started yet last, by name. */
function inStartOrder(a: EffectRunRow, b: EffectRunRow): number {
  const started = (a.startedAt?.getTime() ?? Infinity) - (b.startedAt?.getTime() ?? Infinity);
  return started || (a.effect < b.effect ? -1 : a.effect > b.effect ? 1 : 0);
}
