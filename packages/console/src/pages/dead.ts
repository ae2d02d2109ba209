import { eventFilter } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import { allowed } from '../auth/permissions.ts';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import type { ConsoleError } from '../errors.ts';
import { layout } from '../views/layout.ts';
import { eventsTable, type EventRow } from './events.ts';
import { listAddress, refusalAlert, replaySelected, selectionForm } from './replay-selected.ts';

const SHOWN = 100;

/** Dead events (every retry used, or a permanent failure), newest first, with the way to replay them. */
export function deadPage(app: ConsoleApp, services: ConsoleServices): void {
  /** The list; `refusal` is a "Replay selected" refused, shown above the rows (400). */
  const show = async (c: ConsoleContext, refusal?: ConsoleError) => {
    const rows = await read<EventRow>(
      services.pool,
      eventFilter.listEvents({ status: 'dead' }, SHOWN),
      services.queryTimeoutMs,
    );
    const page = rows.slice(0, SHOWN);
    const selectable = allowed(c, 'replay');
    return c.html(
      layout({
        base: services.base,
        title: 'Dead letters',
        section: 'dead',
        session: pageSession(c),
        body: html`<h1>Dead letters</h1>
          <p>
            Events whose effects failed every retry (or failed permanently). Fix the cause, then replay them
            one by one from their page, or
            <a class="button" href="${services.base}/bulk?status=dead">bulk replay every dead event…</a>
          </p>
          <p>
            <a href="${services.base}/failures"
              >The failing effects grouped by cause, each replayable on its own →</a
            >
          </p>
          ${refusalAlert(refusal)}
          ${selectable && page.length ? selectionForm(listAddress(c), c.get('csrf'), '') : ''}
          ${eventsTable(services.base, page, selectable)}
          ${
            rows.length > SHOWN
              ? html`<p><a href="${services.base}/events?status=dead">All dead events, page by page →</a></p>`
              : ''
          }`,
      }),
      refusal ? 400 : 200,
    );
  };
  app.get('/dead', (c) => show(c));
  app.post('/dead', (c) => replaySelected(c, services, show));
}
