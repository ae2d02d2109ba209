import { eventFilter } from '@webhook-inbox/inbox/sql';
import { replayOperations } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { audit, type ConsoleApp, type ConsoleServices, pageSession } from '../context.ts';
import { read, run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { parseFilter, readForm, type FilterForm } from '../filter.ts';
import { cliCommand, count, eventLink, utc } from '../views/format.ts';
import { allowed } from '../auth/permissions.ts';
import { idParam } from '../params.ts';
import { csrfField, layout, statusBadge, type Html } from '../views/layout.ts';
import { table } from '../views/table.ts';
import { eventsTable, filterForm, type EventRow } from './events.ts';
import { maskRow } from '../masking.ts';
import { actionGroup, groupChoices } from '../scope.ts';

const SAMPLE_SIZE = 20;
const OUTCOME_EVENTS = 200;
/** A selection's events named on the operation's page; the rest counted. */
const CHOSEN_NAMED = 5;

/** An operation's stored filter: the form's given fields (`/bulk`), or a selection's keys and group. */
type StoredFilter = Partial<FilterForm> & { keys?: Array<[string, string]> };

interface OperationRow {
  id: number;
  filter: StoredFilter;
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

/**
 * Bulk replay: a dry run (how many events the filter covers, the first of them) whose form starts a background
 * operation over exactly that set (events received up to the dry run's instant); the operation's page follows
 * its progress and can cancel it.
 */
export function operationsPages(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/bulk', async (c) => {
    const form = readForm(c.req.query());
    form.group = actionGroup(c, form.group);
    const upTo = services.now();
    const { filter, resolved } = parseFilter(form, upTo);
    const choices = await groupChoices(c, services);
    const t = services.queryTimeoutMs;
    const [[counted], sample, providers] = await Promise.all([
      read<{ n: number }>(services.pool, eventFilter.countEvents(filter, upTo), t),
      read<EventRow>(services.pool, eventFilter.nextEvents(filter, upTo, SAMPLE_SIZE, null), t),
      read<{ provider: string }>(services.pool, eventFilter.listProviders(), t),
    ]);
    const total = counted?.n ?? 0;
    return c.html(
      layout({
        base: services.base,
        title: 'Bulk replay',
        section: 'operations',
        session: pageSession(c),
        body: html`<h1>Bulk replay: dry run</h1>
          ${filterForm(
            services.base,
            '/bulk',
            form,
            providers.map((p) => p.provider),
            { choices, all: undefined },
          )}
          <p class="count" role="status">
            <strong>${count(total)}</strong> event${total === 1 ? '' : 's'} received up to ${utc(upTo)} match.
            Each is replayed as the event page's button does: only effects that have not completed run.
          </p>
          ${
            total > 0 && allowed(c, 'replay')
              ? html`<form method="post" action="${services.base}/bulk" class="inline">
                  ${csrfField(c.get('csrf'))}
                  ${Object.entries(resolved).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
                  <input type="hidden" name="upTo" value="${upTo.toISOString()}" />
                  <button type="submit">Replay all ${count(total)} events</button>
                </form>`
              : ''
          }
          <pre class="cli"><code>${bulkCli(resolved)}</code></pre>
          <h2>The first ${Math.min(SAMPLE_SIZE, total)} (oldest first)</h2>
          ${eventsTable(
            services.base,
            sample.map((row) => maskRow(c, services, row)),
          )}`,
      }),
    );
  });

  app.post('/bulk', async (c) => {
    const body = await c.req.parseBody();
    const form = readForm(body);
    form.group = actionGroup(c, form.group);
    const upTo = new Date(typeof body.upTo === 'string' ? body.upTo : '');
    if (Number.isNaN(upTo.getTime()))
      throw new ConsoleError('invalid_input', "upTo must be the dry run's time");
    const { filter, resolved } = parseFilter(form, services.now());
    if (filter.group && !(await services.effectsFor(filter.group))) {
      throw new ConsoleError(
        'invalid_input',
        `no worker of consumer group "${filter.group}" has recorded its effects yet: start it first`,
      );
    }
    const [counted] = await read<{ n: number }>(
      services.pool,
      eventFilter.countEvents(filter, upTo),
      services.queryTimeoutMs,
    );
    const total = counted?.n ?? 0;
    // Only the fields given: the stored filter reads as what the operator asked for.
    const given = Object.fromEntries(Object.entries(resolved).filter(([, v]) => v !== ''));
    const [operation] = await run<OperationRow>(
      services.pool,
      replayOperations.insertOperation(given, upTo, total, c.get('session').who),
    );
    if (!operation) throw new Error('insert into replay_operations returned no row');
    await audit(services, c, 'bulk_replay_started', `replay operation ${operation.id}`, {
      filter: given,
      receivedUpTo: upTo.toISOString(),
      total,
    });
    services.wakeRunner();
    return c.redirect(`${services.base}/operations/${operation.id}`, 303);
  });

  app.get('/operations', async (c) => {
    const operations = await read<OperationRow>(
      services.pool,
      replayOperations.listOperations(50),
      services.queryTimeoutMs,
    );
    const outcomes = await loadOutcomes(
      services,
      operations.map((o) => o.id),
    );
    return c.html(
      layout({
        base: services.base,
        title: 'Bulk replays',
        section: 'operations',
        session: pageSession(c),
        body: html`<h1>Bulk replays</h1>
          <p>
            <a class="button" href="${services.base}/bulk?status=failed">New bulk replay (failed events)…</a>
          </p>
          ${
            operations.length === 0
              ? html`<p class="empty">No bulk replay yet.</p>`
              : html`<div class="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">#</th>
                        <th scope="col">Filter</th>
                        <th scope="col">Status</th>
                        <th scope="col">Progress</th>
                        <th scope="col">Outcome now</th>
                        <th scope="col">By</th>
                        <th scope="col">Started (UTC)</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${operations.map(
                        (o) =>
                          html`<tr>
                            <td><a href="${services.base}/operations/${o.id}">${o.id}</a></td>
                            <td>${describeFilter(o.filter)}</td>
                            <td>${statusBadge(o.status)}</td>
                            <td class="num">${count(o.done)} / ${count(o.total)}</td>
                            <td>${outcomeLine(services.base, o.id, outcomes.get(String(o.id)))}</td>
                            <td>${o.createdBy}</td>
                            <td class="nowrap">${utc(o.createdAt)}</td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>
                </div>`
          }`,
      }),
    );
  });

  app.get('/operations/:id', async (c) => {
    const operation = await loadOperation(services, idParam(c));
    const outcome = (await loadOutcomes(services, [operation.id])).get(String(operation.id));
    return c.html(
      layout({
        base: services.base,
        title: `Bulk replay ${operation.id}`,
        section: 'operations',
        session: pageSession(c),
        body: html`<h1>Bulk replay ${operation.id}</h1>
          <dl class="facts">
            <dt>Filter</dt>
            <dd>${describeFilter(operation.filter)}</dd>
            <dt>Events received up to</dt>
            <dd>${utc(operation.receivedUpTo)}</dd>
            <dt>Started by</dt>
            <dd>${operation.createdBy}, ${utc(operation.createdAt)}</dd>
          </dl>
          ${progress(services.base, operation, allowed(c, 'replay') ? c.get('csrf') : undefined, outcome)}`,
      }),
    );
  });

  // The progress block alone: the page's htmx polls it every second until the operation is finished.
  app.get('/operations/:id/progress', async (c) => {
    const operation = await loadOperation(services, idParam(c));
    const outcome = (await loadOutcomes(services, [operation.id])).get(String(operation.id));
    return c.html(
      progress(services.base, operation, allowed(c, 'replay') ? c.get('csrf') : undefined, outcome),
    );
  });

  // The replayed events of one outcome (`?outcome=processed|failing|dead`), linked from the outcome line.
  app.get('/operations/:id/events', async (c) => {
    const operation = await loadOperation(services, idParam(c));
    const requested = c.req.query('outcome') ?? 'dead';
    if (!(requested in replayOperations.OUTCOME_STATES))
      throw new ConsoleError('invalid_input', 'outcome must be processed, failing or dead');
    const outcome = requested as keyof typeof replayOperations.OUTCOME_STATES;
    const events = await read<{ provider: string; eventId: string; status: string }>(
      services.pool,
      replayOperations.selectOutcomeEvents(operation.id, outcome, OUTCOME_EVENTS),
      services.queryTimeoutMs,
    );
    return c.html(
      layout({
        base: services.base,
        title: `Bulk replay ${operation.id}: ${outcome}`,
        section: 'operations',
        session: pageSession(c),
        body: html`<h1>Bulk replay ${operation.id}: ${outcome} now</h1>
          <p><a href="${services.base}/operations/${operation.id}">← the operation</a></p>
          ${table(
            ['Event', 'Status now'],
            events.map(
              (e) =>
                html`<tr>
                  <td class="id">${eventLink(services.base, e.provider, e.eventId)}</td>
                  <td>${statusBadge(e.status)}</td>
                </tr>`,
            ),
          )}
          ${events.length === OUTCOME_EVENTS ? html`<p class="hint">The first ${OUTCOME_EVENTS}, by key.</p>` : ''}`,
      }),
    );
  });

  app.post('/operations/:id/cancel', async (c) => {
    const id = idParam(c);
    const [operation] = await run<OperationRow>(
      services.pool,
      replayOperations.cancelOperation(id, c.get('session').who),
    );
    if (!operation) {
      await loadOperation(services, id);
      throw new ConsoleError('conflict', `bulk replay ${id} has already finished`);
    }
    await audit(services, c, 'bulk_replay_cancelled', `replay operation ${id}`, {
      done: operation.done,
      total: operation.total,
    });
    return c.redirect(`${services.base}/operations/${id}`, 303);
  });
}

async function loadOperation(services: ConsoleServices, id: number): Promise<OperationRow> {
  const [operation] = await read<OperationRow>(
    services.pool,
    replayOperations.getOperation(id),
    services.queryTimeoutMs,
  );
  if (!operation) throw new ConsoleError('not_found', `no bulk replay ${id}`);
  return operation;
}

async function loadOutcomes(
  services: ConsoleServices,
  ids: number[],
): Promise<Map<string, replayOperations.OutcomeRow>> {
  if (ids.length === 0) return new Map();
  const rows = await read<replayOperations.OutcomeRow>(
    services.pool,
    replayOperations.selectOutcomes(ids),
    services.queryTimeoutMs,
  );
  // Keyed by the id's text: an operation's id (bigint) reads as text or a number depending on the pool's parsers.
  return new Map(rows.map((row) => [String(row.id), row]));
}

/** Where the replayed events are now: processed, still failing, dead, each linked to its events. */
function outcomeLine(base: string, id: number, outcome: replayOperations.OutcomeRow | undefined): Html {
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
function progress(
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
function describeFilter(filter: StoredFilter): string {
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

function bulkCli(form: FilterForm): string {
  const words = ['replay'];
  if (form.status) words.push('--status', form.status);
  if (form.provider) words.push('--provider', form.provider);
  if (form.type) words.push('--type', form.type);
  if (form.from) words.push('--since', form.from);
  if (form.group) words.push('--group', form.group);
  // A failure group's events: exactly the set this page replays, for any group, the default one included.
  if (form.effect && form.fingerprint) words.push('--effect', form.effect, '--fingerprint', form.fingerprint);
  return `${cliCommand(...words)}${form.to || form.eventId || form.path ? '   # the CLI has no to/event id/payload filter' : ''}`;
}
