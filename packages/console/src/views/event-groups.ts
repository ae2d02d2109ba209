import type { EventGroupRow } from '@webhook-inbox/inbox/event-store';
import { html } from 'hono/html';
import { cliCommand, utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';
import { table } from './table.ts';

/**
 * The event in the other consumer groups: one row each, with the command that replays it for that group (the
 * status above and the replay button are the default group's).
 */
export function groupsTable(provider: string, eventId: string, groups: EventGroupRow[]): Html {
  const rows = groups.map(
    (g) =>
      html`<tr>
        <td class="id">${g.group}</td>
        <td>${statusBadge(g.status)}</td>
        <td>${g.attempts}</td>
        <td>${utc(g.processedAt) || '-'}</td>
        <td class="error-text">${g.lastError ?? ''}</td>
        <td><code>${cliCommand('replay', provider, eventId, '--group', g.group)}</code></td>
      </tr>`,
  );
  const headings = ['Group', 'Status', 'Attempts', 'Processed', 'Last error', 'Replay from a shell'];
  return html`<section aria-labelledby="h-groups">
    <h2 id="h-groups">Consumer groups</h2>
    <p class="hint">The status above is the default group's; each other group with effects for this type:</p>
    ${table(headings, rows)}
  </section>`;
}
