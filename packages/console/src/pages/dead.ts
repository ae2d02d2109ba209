import { eventFilter } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import type { ConsoleApp, ConsoleServices } from '../context.ts';
import { read } from '../db.ts';
import { layout } from '../views/layout.ts';
import { eventsTable, type EventRow } from './events.ts';

const SHOWN = 100;

/** Dead events (every retry used, or a permanent failure), newest first, with the way to replay them. */
export function deadPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/dead', async (c) => {
    const rows = await read<EventRow>(
      services.pool,
      eventFilter.listEvents({ status: 'dead' }, SHOWN),
      services.queryTimeoutMs,
    );
    const page = rows.slice(0, SHOWN);
    return c.html(
      layout({
        base: services.base,
        title: 'Dead letters',
        section: 'dead',
        session: { who: c.get('session').who, csrf: c.get('csrf') },
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
          ${eventsTable(services.base, page)}
          ${
            rows.length > SHOWN
              ? html`<p><a href="${services.base}/events?status=dead">All dead events, page by page →</a></p>`
              : ''
          }`,
      }),
    );
  });
}
