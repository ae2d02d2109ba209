import { auditLog } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { searchParams, utc } from '../views/format.ts';
import { layout } from '../views/layout.ts';
import { groupSelector, scopeLabel } from '../views/group-selector.ts';
import { groupScope, recordGroups } from '../scope.ts';

const PAGE_SIZE = 100;
const FILTERS = ['actor', 'action', 'target'] as const;
/** The longest filter value taken: longer than any actor, action or target the inbox writes. */
const MAX_FILTER_LENGTH = 1200;

/** The page's filters from the query: each an exact match, bounded, without NUL (text cannot hold it). */
function filterOf(c: ConsoleContext): auditLog.AuditFilter {
  const filter: auditLog.AuditFilter = {};
  for (const field of FILTERS) {
    const value = c.req.query(field);
    if (value === undefined || value === '') continue;
    if (value.length > MAX_FILTER_LENGTH || value.includes('\u0000')) {
      throw new ConsoleError('invalid_input', `${field}: at most ${MAX_FILTER_LENGTH} characters, no NUL`);
    }
    filter[field] = value;
  }
  return filter;
}

function beforeOf(c: ConsoleContext): number | undefined {
  const raw = c.req.query('before');
  if (raw === undefined || raw === '') return undefined;
  if (!/^[1-9]\d{0,15}$/.test(raw)) throw new ConsoleError('invalid_input', 'before: a row id');
  return Number(raw);
}

/**
 * Who did what, from every surface, newest first: sign-ins (refused ones too), replays, forced effects, bulk
 * replays, purges, token changes; of the consumer group chosen (a row's group is that of what it acted on), and
 * for a principal limited to groups only its groups' rows, never a row of no group (a sign-in, a purge). Filters by actor, action and target (exact), each cell a link to its filter, an
 * event's target a link to the event.
 */
export function auditPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/audit', async (c) => {
    const filter = filterOf(c);
    const scope = await groupScope(c, services, { remember: false });
    const rows = await read<auditLog.AuditRow>(
      services.pool,
      auditLog.listAudit(PAGE_SIZE + 1, { ...filter, groups: recordGroups(scope) }, beforeOf(c)),
      services.queryTimeoutMs,
    );
    const page = rows.slice(0, PAGE_SIZE);
    const last = page.at(-1);
    const link = (extra: Record<string, string>) =>
      `${services.base}/audit?${searchParams({ ...(filter as Record<string, string>), ...extra })}`;
    const filterLink = (field: (typeof FILTERS)[number], value: string) =>
      html`<a
        href="${services.base}/audit?${searchParams({ ...(filter as Record<string, string>), [field]: value })}"
        >${value}</a
      >`;
    return c.html(
      layout({
        base: services.base,
        title: 'Audit log',
        section: 'audit',
        session: pageSession(c),
        body: html`<h1>Audit log <small>${scopeLabel(scope)}</small></h1>
          ${groupSelector(`${services.base}/audit`, scope)}
          <form class="filters" method="get" action="${services.base}/audit">
            ${FILTERS.map(
              (field) =>
                html`<label
                  >${field}
                  <input name="${field}" value="${filter[field] ?? ''}" maxlength="${MAX_FILTER_LENGTH}"
                /></label>`,
            )}
            <button type="submit">Filter</button>
            ${Object.keys(filter).length > 0 ? html`<a href="${services.base}/audit">Clear</a>` : ''}
          </form>
          <div class="table-wrap">
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Who</th>
                  <th scope="col">Role · method</th>
                  <th scope="col">Action</th>
                  <th scope="col">Group</th>
                  <th scope="col">Target</th>
                  <th scope="col">Details</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                ${page.map(
                  (r) =>
                    html`<tr
                      data-actor="${r.actor}"
                      data-action="${r.action}"
                      data-target="${r.target ?? ''}"
                    >
                      <td class="nowrap">${utc(r.at)}</td>
                      <td>${filterLink('actor', r.actor)}</td>
                      <td>${[r.role, r.authMethod].filter(Boolean).join(' · ')}</td>
                      <td><code>${filterLink('action', r.action)}</code></td>
                      <td data-group="${r.group ?? ''}">${r.group ?? ''}</td>
                      <td class="id">
                        ${r.target === null ? '' : targetCell(services.base, r.target, filterLink)}
                      </td>
                      <td class="details"><code>${JSON.stringify(r.details)}</code></td>
                      <td>${r.remoteAddress ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>
          ${
            rows.length > PAGE_SIZE && last
              ? html`<nav class="pager"><a href="${link({ before: String(last.id) })}">Older →</a></nav>`
              : ''
          }`,
      }),
    );
  });
}

/** A target filters the log; an event's (`<provider> <key>`) and a bulk replay's also open what they name. */
function targetCell(
  base: string,
  target: string,
  filterLink: (field: 'target', value: string) => ReturnType<typeof html>,
): ReturnType<typeof html> {
  const operation = /^replay operation (\d+)$/.exec(target);
  if (operation)
    return html`${filterLink('target', target)} · <a href="${base}/operations/${operation[1]}">open</a>`;
  const event = /^([a-z0-9-]+) (.+)$/.exec(target);
  if (event && !/^(token|replay) /.test(target)) {
    return html`${filterLink('target', target)} ·
      <a href="${base}/event?${searchParams({ provider: event[1]!, id: event[2]! })}">open</a>`;
  }
  return filterLink('target', target);
}
