import { EVENT_STATUSES } from '@webhook-inbox/db/statuses';
import {
  cursorOf,
  decodeCursor,
  encodeCursor,
  InvalidFilterError,
  type EventCursor,
} from '@webhook-inbox/inbox/event-store';
import { eventFilter } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import type { ConsoleApp, ConsoleServices } from '../context.ts';
import { read } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { formQuery, parseFilter, readForm, type FilterForm } from '../filter.ts';
import { searchParams, utc } from '../views/format.ts';
import { layout, statusBadge, type Html } from '../views/layout.ts';

const PAGE_SIZE = 50;

export interface EventRow {
  provider: string;
  eventId: string;
  type: string;
  status: string;
  source: string;
  attempts: number;
  lastError: string | null;
  receivedAt: Date;
  processedAt: Date | null;
  cursorAt: string;
}

export function eventHref(base: string, provider: string, eventId: string): string {
  return `${base}/event?${searchParams({ provider, id: eventId })}`;
}

/** The events table with its filters and keyset pagination ("older" follows the last row's cursor). */
export function eventsPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/events', async (c) => {
    const form = readForm(c.req.query());
    const { filter } = parseFilter(form, services.now());
    const cursor = decodePageCursor(c.req.query('cursor'));
    const [rows, providers] = await Promise.all([
      read<EventRow>(
        services.pool,
        eventFilter.listEvents(filter, PAGE_SIZE, cursor),
        services.queryTimeoutMs,
      ),
      read<{ provider: string }>(services.pool, eventFilter.listProviders(), services.queryTimeoutMs),
    ]);
    const page = rows.slice(0, PAGE_SIZE);
    const last = page.at(-1);
    const next = rows.length > PAGE_SIZE && last ? encodeCursor(cursorOf(last)) : undefined;
    return c.html(
      layout({
        base: services.base,
        title: 'Events',
        section: 'events',
        session: { who: c.get('session').who, csrf: c.get('csrf') },
        body: html`<h1>Events</h1>
          ${filterForm(
            services.base,
            '/events',
            form,
            providers.map((p) => p.provider),
          )}
          <p class="actions">
            <a class="button" href="${services.base}/bulk?${formQuery(form)}">Bulk replay these events…</a>
          </p>
          ${eventsTable(services.base, page)}
          <nav class="pager" aria-label="Pages">
            ${cursor ? html`<a href="${services.base}/events?${formQuery(form)}">Newest</a>` : ''}
            ${
              next
                ? html`<a rel="next" href="${services.base}/events?${formQuery(form, { cursor: next })}"
                    >Older →</a
                  >`
                : html`<span>End of the list</span>`
            }
          </nav>`,
      }),
    );
  });
}

export function eventsTable(base: string, rows: EventRow[]): Html {
  if (rows.length === 0) return html`<p class="empty">No events match.</p>`;
  return html`<div class="table-wrap">
    <table class="events">
      <caption class="visually-hidden">
        Events, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Received (UTC)</th>
          <th scope="col">Provider</th>
          <th scope="col">Event</th>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last error</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (e) =>
            html`<tr>
              <td class="nowrap">${utc(e.receivedAt)}</td>
              <td>${e.provider}</td>
              <td class="id"><a href="${eventHref(base, e.provider, e.eventId)}">${e.eventId}</a></td>
              <td>${e.type}</td>
              <td>${statusBadge(e.status)}</td>
              <td class="num">${e.attempts}</td>
              <td class="error-text">${e.lastError ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The filter form, shared by the events page and the bulk replay's dry run. */
export function filterForm(base: string, action: string, form: FilterForm, providers: string[]): Html {
  const option = (value: string, selected: string, label = value) =>
    html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="${base}${action}" role="search">
    <div>
      <label for="f-provider">Provider</label>
      <select id="f-provider" name="provider">
        ${option('', form.provider, 'any')} ${providers.map((p) => option(p, form.provider))}
      </select>
    </div>
    <div>
      <label for="f-status">Status</label>
      <select id="f-status" name="status">
        ${option('', form.status, 'any')} ${EVENT_STATUSES.map((s) => option(s, form.status))}
      </select>
    </div>
    <div>
      <label for="f-group">Consumer group</label>
      <input id="f-group" name="group" value="${form.group}" placeholder="default" />
    </div>
    <div>
      <label for="f-type">Type</label>
      <input id="f-type" name="type" value="${form.type}" placeholder="checkout.session.completed" />
    </div>
    <div>
      <label for="f-from">From <small>(UTC, or 24h)</small></label>
      <input id="f-from" name="from" value="${form.from}" placeholder="24h" />
    </div>
    <div>
      <label for="f-to">To <small>(UTC)</small></label>
      <input id="f-to" name="to" value="${form.to}" placeholder="2026-12-03T10:00" />
    </div>
    <div>
      <label for="f-id">Event id</label>
      <input id="f-id" name="eventId" value="${form.eventId}" placeholder="evt_..." />
    </div>
    <div>
      <label for="f-path">Payload path</label>
      <input id="f-path" name="path" value="${form.path}" placeholder="data.object.customer" />
    </div>
    <div>
      <label for="f-value">equals <small>(JSON or text)</small></label>
      <input id="f-value" name="value" value="${form.value}" placeholder="cus_123" />
    </div>
    <div class="submit"><button type="submit">Filter</button></div>
  </form>`;
}

/** The page's cursor, as the event log's pages (the admin API's, the CLI's) hand it out. */
function decodePageCursor(text: string | undefined): EventCursor | undefined {
  if (!text) return undefined;
  try {
    return decodeCursor(text);
  } catch (error) {
    if (error instanceof InvalidFilterError) {
      throw new ConsoleError('invalid_input', 'the cursor is not one this page gave', { cause: error });
    }
    throw error;
  }
}
