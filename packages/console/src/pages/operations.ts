import { eventFilter } from '@webhook-inbox/inbox/sql';
import { replayOperations } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import {
  audit,
  type ConsoleApp,
  type ConsoleContext,
  type ConsoleServices,
  pageSession,
} from '../context.ts';
import { read, run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { parseFilter, readForm, type FilterForm } from '../filter.ts';
import { cliCommand, count, eventLink, utc } from '../views/format.ts';
import { allowed } from '../auth/permissions.ts';
import { idParam } from '../params.ts';
import { csrfField, layout, statusBadge } from '../views/layout.ts';
import { table } from '../views/table.ts';
import { describeFilter, outcomeLine, progress, type OperationRow } from '../views/operation.ts';
import { eventsTable, filterForm, type EventRow } from './events.ts';
import { maskRow } from '../masking.ts';
import { actionGroup, groupChoices, groupScope, recordGroups } from '../scope.ts';
import { groupSelector, scopeLabel } from '../views/group-selector.ts';
import { coversGroup } from '@webhook-inbox/operator/access/roles';

const SAMPLE_SIZE = 20;
const OUTCOME_EVENTS = 200;

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
    const { filter, resolved } = parseFilter(form, upTo, services.caselessIdProviders);
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
    const { filter, resolved } = parseFilter(form, services.now(), services.caselessIdProviders);
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
    await audit(
      services,
      c,
      'bulk_replay_started',
      `replay operation ${operation.id}`,
      {
        filter: given,
        receivedUpTo: upTo.toISOString(),
        total,
      },
      form.group,
    );
    services.wakeRunner();
    return c.redirect(`${services.base}/operations/${operation.id}`, 303);
  });

  app.get('/operations', async (c) => {
    const scope = await groupScope(c, services, { remember: false });
    const operations = await read<OperationRow>(
      services.pool,
      replayOperations.listOperations(50, recordGroups(scope)),
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
        body: html`<h1>Bulk replays <small>${scopeLabel(scope)}</small></h1>
          ${groupSelector(`${services.base}/operations`, scope)}
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
    const operation = await loadOperation(c, services, idParam(c));
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
    const operation = await loadOperation(c, services, idParam(c));
    const outcome = (await loadOutcomes(services, [operation.id])).get(String(operation.id));
    return c.html(
      progress(services.base, operation, allowed(c, 'replay') ? c.get('csrf') : undefined, outcome),
    );
  });

  // The replayed events of one outcome (`?outcome=processed|failing|dead`), linked from the outcome line.
  app.get('/operations/:id/events', async (c) => {
    const operation = await loadOperation(c, services, idParam(c));
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
    const { group } = await loadOperation(c, services, id);
    const [operation] = await run<OperationRow>(
      services.pool,
      replayOperations.cancelOperation(id, c.get('session').who),
    );
    if (!operation) throw new ConsoleError('conflict', `bulk replay ${id} has already finished`);
    await audit(
      services,
      c,
      'bulk_replay_cancelled',
      `replay operation ${id}`,
      { done: operation.done, total: operation.total },
      group,
    );
    return c.redirect(`${services.base}/operations/${id}`, 303);
  });
}

/** An operation, refused (404, as one that is not there) to a principal not limited to its group. */
async function loadOperation(
  c: ConsoleContext,
  services: ConsoleServices,
  id: number,
): Promise<OperationRow> {
  const [operation] = await read<OperationRow>(
    services.pool,
    replayOperations.getOperation(id),
    services.queryTimeoutMs,
  );
  if (!operation || !coversGroup(c.get('principal'), operation.group)) {
    throw new ConsoleError('not_found', `no bulk replay ${id}`);
  }
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
