import { eventFilter } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import { allowed } from '../auth/permissions.ts';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import type { ConsoleError } from '../errors.ts';
import { groupSelector, scopeLabel } from '../views/group-selector.ts';
import { searchParams } from '../views/format.ts';
import { layout } from '../views/layout.ts';
import { groupScope } from '../scope.ts';
import { masked, maskRow, scopedFilter } from '../masking.ts';
import { eventsTable, type EventRow } from './events.ts';
import { listAddress, refusalAlert, replaySelected, selectionForm } from './replay-selected.ts';

const SHOWN = 100;

/** Dead events (every retry used, or a permanent failure), newest first, with the way to replay them. */
export function deadPage(app: ConsoleApp, services: ConsoleServices): void {
  /** The list; `refusal` is a "Replay selected" refused, shown above the rows (400). */
  const show = async (c: ConsoleContext, refusal?: ConsoleError) => {
    const scope = await groupScope(c, services);
    const filter = scopedFilter(scope, { status: 'dead' }, masked(c, services));
    const rows = await read<EventRow>(
      services.pool,
      eventFilter.listEvents(filter, SHOWN),
      services.queryTimeoutMs,
    );
    const page = rows.slice(0, SHOWN).map((row) => maskRow(c, services, row));
    // A selection replays in one group: the chosen one.
    const selectable = allowed(c, 'replay') && scope.selected !== null;
    const group = scope.selected ?? '';
    const list = searchParams({ status: 'dead', group });
    return c.html(
      layout({
        base: services.base,
        title: 'Dead letters',
        section: 'dead',
        session: pageSession(c),
        body: html`<h1>Dead letters <small>${scopeLabel(scope)}</small></h1>
          ${groupSelector(`${services.base}/dead`, scope)}
          <p>
            Events whose effects failed every retry (or failed permanently). Fix the cause, then replay them
            one by one from their page, or
            ${
              scope.selected === null
                ? html`choose a consumer group to replay them in bulk or by selection.`
                : html`<a class="button" href="${services.base}/bulk?${list}"
                    >bulk replay every dead event of ${scope.selected}…</a
                  >`
            }
          </p>
          <p>
            <a href="${services.base}/failures"
              >The failing effects grouped by cause, each replayable on its own →</a
            >
          </p>
          ${refusalAlert(refusal)}
          ${selectable && page.length ? selectionForm(listAddress(c), c.get('csrf'), group) : ''}
          ${eventsTable(services.base, page, selectable)}
          ${
            rows.length > SHOWN
              ? html`<p><a href="${services.base}/events?${list}">All dead events, page by page →</a></p>`
              : ''
          }`,
      }),
      refusal ? 400 : 200,
    );
  };
  app.get('/dead', (c) => show(c));
  app.post('/dead', (c) => replaySelected(c, services, show));
}
