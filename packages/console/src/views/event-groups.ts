import type { EventGroupRow } from '@webhook-inbox/inbox/event-store';
import { html } from 'hono/html';
import { cliCommand, utc } from './format.ts';
import { csrfField, statusBadge, type Html } from './layout.ts';
import { table } from './table.ts';

/** What the event page's replay forms need: where they post, the CSRF token, and whether the role may replay. */
export interface ReplayForms {
  base: string;
  csrf: string;
  canReplay: boolean;
}

/** The one-click replay of the event's unfinished effects in `group`: the form sends the group. */
function replayButton(forms: ReplayForms, provider: string, eventId: string, group: string): Html {
  return html`<form method="post" action="${forms.base}/event/replay" class="inline">
    ${csrfField(forms.csrf)}
    <input type="hidden" name="provider" value="${provider}" />
    <input type="hidden" name="id" value="${eventId}" />
    <input type="hidden" name="group" value="${group}" />
    <button type="submit" aria-label="Replay unfinished effects in ${group}">
      Replay unfinished effects
    </button>
  </form>`;
}

/** The CLI line that replays the event in `group`. */
function replayCommand(provider: string, eventId: string, group: string): string {
  return cliCommand('replay', provider, eventId, '--group', group);
}

/**
 * The event's status in each consumer group the page shows, side by side, each with its own replay: the default
 * group's is the event's row, another group's its `webhook_event_groups` row. With one group, the replay alone.
 */
export function groupsSection(
  forms: ReplayForms,
  provider: string,
  eventId: string,
  groups: readonly EventGroupRow[],
): Html {
  if (groups.length === 1) {
    const [only] = groups as [EventGroupRow];
    if (!forms.canReplay) return html``;
    return html`<section aria-labelledby="h-replay">
      <h2 id="h-replay">Replay</h2>
      ${
        only.status === 'processed'
          ? html`<p class="hint">Processed: every effect completed, nothing to replay.</p>`
          : html`${replayButton(forms, provider, eventId, only.group)}
              <p class="hint">Runs again only the effects that have not completed. Same from a shell:</p>
              <pre class="cli"><code>${replayCommand(provider, eventId, only.group)}</code></pre>`
      }
    </section>`;
  }
  const rows = groups.map(
    (g) =>
      html`<tr data-group="${g.group}">
        <td class="id">${g.group}</td>
        <td>${statusBadge(g.status)}</td>
        <td>${g.attempts}</td>
        <td>${utc(g.processedAt) || '-'}</td>
        <td class="error-text">${g.lastError ?? ''}</td>
        ${
          forms.canReplay
            ? html`<td>
                ${
                  g.status === 'processed'
                    ? html`<span class="hint">processed: nothing to replay</span>`
                    : replayButton(forms, provider, eventId, g.group)
                }
              </td>`
            : ''
        }
        <td><code>${replayCommand(provider, eventId, g.group)}</code></td>
      </tr>`,
  );
  const headings = [
    'Group',
    'Status',
    'Attempts',
    'Processed',
    'Last error',
    ...(forms.canReplay ? ['Replay'] : []),
    'Replay from a shell',
  ];
  return html`<section aria-labelledby="h-groups">
    <h2 id="h-groups">Consumer groups</h2>
    <p class="hint">
      The event in each consumer group with effects for its type; a replay runs that group's effects that have
      not completed.
    </p>
    ${table(headings, rows)}
  </section>`;
}
