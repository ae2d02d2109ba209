import { DEFAULT_GROUP, EVENT_STATUSES } from '@webhook-inbox/db/statuses';
import {
  cursorOf,
  decodeCursor,
  encodeCursor,
  InvalidFilterError,
  type EventCursor,
  type EventFilter,
} from '@webhook-inbox/inbox/event-store';
import { eventFilter } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import { allowed } from '../auth/permissions.ts';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { formQuery, parseFilter, readForm, type FilterForm } from '../filter.ts';
import { wantsJson } from '../views/error-page.ts';
import { count, eventHref, utc } from '../views/format.ts';
import { layout, statusBadge, type Html } from '../views/layout.ts';
import { masked, maskRow, scopedFilter } from '../masking.ts';
import { groupScope } from '../scope.ts';
import { listAddress, refusalAlert, replaySelected, selectionBox, selectionForm } from './replay-selected.ts';

const PAGE_SIZE = 50;
/** Totals are counted exactly up to here (a bounded count); beyond, the page says "more than". */
const COUNT_CAP = 10_000;
/**
 * A payload search tests at most this many events per page (newest first in the other filters' range): each test
 * reads a payload, so this bounds the page's time whatever the table's size (see docs/performance.md).
 */
export const PAYLOAD_SCAN = 5_000;

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
  subject?: string | null;
  cursorAt: string;
}

interface ScannedRow extends Omit<EventRow, 'eventId'> {
  eventId: string | null;
  edgeAt: string;
  edgeProvider: string;
  edgeId: string;
  scanned: number;
}

/** What the list holds: its rows, where the next page starts, and how the rows relate to the whole. */
interface Listing {
  page: EventRow[];
  next: string | undefined;
  total: Html;
}

/**
 * The events table with its filters and keyset pagination ("older" follows the last row's cursor). A filter the
 * page cannot use answers 400 with the form and the field's error, never an error page.
 */
export function eventsPage(app: ConsoleApp, services: ConsoleServices): void {
  /** The list; `refusal` is a "Replay selected" refused, shown above the rows (400). */
  const show = async (c: ConsoleContext, refusal?: ConsoleError) => {
    const scope = await groupScope(c, services);
    const form = { ...readForm(c.req.query()), group: scope.selected ?? '' };
    const groups: GroupField = {
      choices: scope.choices,
      all: scope.limit ? `all my groups` : 'all groups',
    };
    const isMasked = masked(c, services);
    const providers = await read<{ provider: string }>(
      services.pool,
      eventFilter.listProviders(),
      services.queryTimeoutMs,
    );
    // A selection replays in one group: the chosen one.
    const selectable = allowed(c, 'replay') && scope.selected !== null;
    const render = (content: Html, status: 200 | 400) =>
      c.html(
        layout({
          base: services.base,
          title: 'Events',
          section: 'events',
          session: pageSession(c),
          body: html`<h1>Events</h1>
            ${content}`,
        }),
        status,
      );
    const names = providers.map((p) => p.provider);
    let filter: EventFilter;
    let cursor: EventCursor | undefined;
    try {
      filter = scopedFilter(
        scope,
        parseFilter({ ...form, group: '' }, services.now(), services.caselessIdProviders).filter,
        isMasked,
      );
      cursor = decodePageCursor(c.req.query('cursor'));
    } catch (error) {
      if (!(error instanceof ConsoleError) || error.code !== 'invalid_input') throw error;
      // A browser gets the form with the field's error; htmx and scripts the JSON refusal, as from every page.
      if (wantsJson(c)) throw error;
      return render(filterForm(services.base, '/events', form, names, groups, error), 400);
    }
    const at = Math.max(0, Number.parseInt(c.req.query('at') ?? '0', 10) || 0);
    const listing = filter.payload
      ? await scanPage(services, { ...filter, payload: filter.payload }, cursor)
      : await listPage(services, filter, cursor, at);
    const { next } = listing;
    const page = listing.page.map((row) => maskRow(c, services, row));
    return render(
      html`${filterForm(services.base, '/events', form, names, groups)}
        <p class="actions">
          <span class="total" data-total>${listing.total}</span>
          ${
            scope.selected === null
              ? html`<span class="hint">Choose a consumer group to replay these events in bulk.</span>`
              : html`<a class="button" href="${services.base}/bulk?${formQuery(form)}"
                  >Bulk replay these events…</a
                >`
          }
        </p>
        ${refusalAlert(refusal)}
        ${selectable && page.length ? selectionForm(listAddress(c), c.get('csrf'), form.group) : ''}
        ${eventsTable(services.base, page, selectable)}
        <nav class="pager" aria-label="Pages">
          ${cursor ? html`<a href="${services.base}/events?${formQuery(form)}">Newest</a>` : ''}
          ${
            next
              ? html`<a rel="next" href="${olderHref(services.base, form, next, at + page.length)}"
                  >Older →</a
                >`
              : html`<span>End of the list</span>`
          }
        </nav>`,
      refusal ? 400 : 200,
    );
  };
  app.get('/events', (c) => show(c));
  app.post('/events', (c) => replaySelected(c, services, show));
}

function olderHref(base: string, form: FilterForm, cursor: string, at: number): string {
  return `${base}/events?${formQuery(form, { cursor, at: String(at) })}`;
}

async function listPage(
  services: ConsoleServices,
  filter: EventFilter,
  cursor: EventCursor | undefined,
  at: number,
): Promise<Listing> {
  const unfiltered = Object.keys(filter).length === 0;
  const [rows, counted] = await Promise.all([
    read<EventRow>(services.pool, eventFilter.listEvents(filter, PAGE_SIZE, cursor), services.queryTimeoutMs),
    read<{ n: number }>(services.pool, eventFilter.countUpTo(filter, COUNT_CAP + 1), services.queryTimeoutMs),
  ]);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  const next = rows.length > PAGE_SIZE && last ? encodeCursor(cursorOf(last)) : undefined;
  const n = counted[0]?.n ?? 0;
  const range = page.length ? `${count(at + 1)}–${count(at + page.length)} of ` : '';
  if (n <= COUNT_CAP) return { page, next, total: html`${range}${count(n)} event${n === 1 ? '' : 's'}` };
  if (!unfiltered) return { page, next, total: html`${range}more than ${count(COUNT_CAP)} events` };
  const [estimate] = await read<{ n: string }>(
    services.pool,
    eventFilter.estimateAll(),
    services.queryTimeoutMs,
  );
  const about = Math.max(Number(estimate?.n ?? 0), COUNT_CAP + 1);
  return { page, next, total: html`${range}about ${count(about)} events <small>(estimated)</small>` };
}

/** A payload search's page: what matched in the events scanned, and where to go on when it stopped short. */
async function scanPage(
  services: ConsoleServices,
  filter: Parameters<typeof eventFilter.scanPayloads>[0],
  cursor: EventCursor | undefined,
): Promise<Listing> {
  const rows = await read<ScannedRow>(
    services.pool,
    eventFilter.scanPayloads(filter, PAGE_SIZE, PAYLOAD_SCAN, cursor),
    services.queryTimeoutMs,
  );
  const matched = rows.filter((row): row is ScannedRow & { eventId: string } => row.eventId !== null);
  const page = matched.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  const edge = rows[0];
  if (matched.length > PAGE_SIZE && last) {
    return {
      page,
      next: encodeCursor(cursorOf(last)),
      total: html`${count(page.length)} shown; more follow`,
    };
  }
  if (edge && edge.scanned >= PAYLOAD_SCAN) {
    return {
      page,
      next: encodeCursor([edge.edgeAt, edge.edgeProvider, edge.edgeId]),
      total: html`<span class="warning" role="status"
        >${count(page.length)} found in the ${count(PAYLOAD_SCAN)} newest events of this range, down to
        ${utc(edge.edgeAt)}. A payload search reads each payload: narrow the time range (From, To) or go on
        with Older →.</span
      >`,
    };
  }
  return { page, next: undefined, total: html`${count(page.length)} event${page.length === 1 ? '' : 's'}` };
}

/** `selectable`: each row has a checkbox of the "Replay selected" form (`replay-selected.ts`). */
export function eventsTable(base: string, rows: EventRow[], selectable = false): Html {
  if (rows.length === 0) return html`<p class="empty">No events match.</p>`;
  return html`<div class="table-wrap">
    <table class="events">
      <caption class="visually-hidden">
        Events, newest first
      </caption>
      <thead>
        <tr>
          ${
            selectable
              ? html`<th scope="col">
                  <span class="visually-hidden">Select</span>
                  <input
                    type="checkbox"
                    data-select-all
                    hidden
                    aria-label="Select every event of this page"
                  />
                </th>`
              : ''
          }
          <th scope="col">Received (UTC)</th>
          <th scope="col">Provider</th>
          <th scope="col">Event</th>
          <th scope="col">Type</th>
          <th scope="col">Subject</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last error</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (e) =>
            html`<tr>
              ${selectable ? html`<td>${selectionBox(e.provider, e.eventId)}</td>` : ''}
              <td class="nowrap">${utc(e.receivedAt)}</td>
              <td>${e.provider}</td>
              <td class="id"><a href="${eventHref(base, e.provider, e.eventId)}">${e.eventId}</a></td>
              <td>${e.type}</td>
              <td class="subject">${e.subject ?? ''}</td>
              <td>${statusBadge(e.status)}</td>
              <td class="num">${e.attempts}</td>
              <td class="error-text">${e.lastError ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/**
 * The filter form, shared by the events page and the bulk replay's dry run; `error` (a refused field) is shown
 * above the form and next to its field, which is marked `aria-invalid`.
 */
export function filterForm(
  base: string,
  action: string,
  form: FilterForm,
  providers: string[],
  groups: GroupField,
  error?: ConsoleError,
): Html {
  const option = (value: string, selected: string, label = value) =>
    html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;
  const field = (name: keyof FilterForm) => {
    if (error?.field !== name) return html``;
    return html`aria-invalid="true" aria-describedby="f-error"`;
  };
  const input = (name: keyof FilterForm, label: Html | string, placeholder: string, type = 'text') =>
    html`<div>
      <label for="f-${name}">${label}</label>
      <input
        id="f-${name}"
        name="${name}"
        type="${type}"
        value="${form[name]}"
        placeholder="${placeholder}"
        ${field(name)}
      />
    </div>`;
  return html`${error ? html`<p class="error" id="f-error" role="alert" data-code="${error.code}">${error.message}</p>` : ''}
    <form class="filters" method="get" action="${base}${action}" role="search">
      <div class="search">
        <label for="f-q"
          >Search <small>(event id or its start, customer, email, shop, repository, type)</small></label
        >
        <input
          id="f-q"
          name="q"
          type="search"
          value="${form.q}"
          placeholder="evt_1Q, cus_123, ada@example.com"
          ${field('q')}
        />
      </div>
      <div>
        <label for="f-provider">Provider</label>
        <select id="f-provider" name="provider">
          ${option('', form.provider, 'any')} ${providers.map((p) => option(p, form.provider))}
        </select>
      </div>
      <div>
        <label for="f-status">Status</label>
        <select id="f-status" name="status" ${field('status')}>
          ${option('', form.status, 'any')} ${EVENT_STATUSES.map((s) => option(s, form.status))}
        </select>
      </div>
      <div>
        <label for="f-group">Consumer group</label>
        <select id="f-group" name="group" ${field('group')}>
          ${groups.all === undefined ? '' : option('', form.group, groups.all)}
          ${groups.choices.map((g) => option(g, form.group || (groups.all === undefined ? DEFAULT_GROUP : ''), g))}
        </select>
      </div>
      ${input('type', 'Type', 'checkout.session.completed')}
      ${input('from', html`From <small>(UTC, or 24h)</small>`, '24h')}
      ${input('to', html`To <small>(UTC)</small>`, '2026-12-03T10:00')}
      ${input('path', 'Payload path', 'data.object.customer')}
      ${input('value', html`equals <small>(JSON or text)</small>`, 'cus_123')}
      ${form.eventId ? html`<input type="hidden" name="eventId" value="${form.eventId}" />` : ''}
      ${
        form.effect || form.fingerprint
          ? html`<p class="failure-filter" data-failure-filter>
              Failure group: <strong>${form.effect}</strong> failing with
              <code class="error-text">${form.fingerprint}</code>
              <a href="${base}${action}?${formQuery({ ...form, effect: '', fingerprint: '' })}">remove</a>
              <input type="hidden" name="effect" value="${form.effect}" />
              <input type="hidden" name="fingerprint" value="${form.fingerprint}" />
            </p>`
          : ''
      }
      <div class="submit"><button type="submit">Filter</button></div>
      <p class="ranges">
        Received in the last
        ${RANGES.map(
          (range) =>
            html`<a href="${base}${action}?${formQuery({ ...form, from: range, to: '' })}">${range}</a> `,
        )}
      </p>
    </form>`;
}

const RANGES = ['1h', '24h', '7d', '30d'];

/**
 * The form's consumer groups: `choices` (the principal's), and the label of the empty choice: "all groups" on the
 * lists; `undefined` where one group is needed (a bulk replay: empty is the default group).
 */
export interface GroupField {
  choices: readonly string[];
  all: string | undefined;
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
