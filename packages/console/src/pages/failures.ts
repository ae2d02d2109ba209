import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import { failureGroups } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { allowed } from '../auth/permissions.ts';
import { audit, type ConsoleApp, type ConsoleServices, pageSession } from '../context.ts';
import { read, run } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { failureGroupsTable, groupHref, trendSvg } from '../views/failure-groups.ts';
import { cliCommand, count, eventLink, searchParams, utc } from '../views/format.ts';
import { csrfField, layout, statusBadge } from '../views/layout.ts';
import { table } from '../views/table.ts';
import { groupSelector, scopeLabel } from '../views/group-selector.ts';
import { maskText } from '../masking.ts';
import { actionGroup, groupScope, inScope } from '../scope.ts';

const EXAMPLES = 20;
const STATES = ['unresolved', 'open', 'acknowledged', 'resolved', 'all'] as const;
type StateFilter = (typeof STATES)[number];

/** Which groups a state filter shows: `unresolved` (the default) is open and acknowledged. */
function inState(filter: StateFilter, row: failureGroups.FailureGroupRow): boolean {
  if (filter === 'all') return true;
  if (filter === 'unresolved') return row.state !== 'resolved';
  return row.state === filter;
}

function groupKey(source: Record<string, unknown>): failureGroups.FailureGroupKey {
  const text = (key: string) => (typeof source[key] === 'string' ? source[key] : '');
  const key = {
    group: text('group') || DEFAULT_GROUP,
    effect: text('effect'),
    fingerprint: text('fingerprint'),
  };
  if (!key.effect) throw new ConsoleError('invalid_input', 'effect is required');
  return key;
}

/**
 * Failures grouped by cause: every failing effect of an unfinished event, by consumer group, effect and
 * normalized error, with counts, first and last seen and the last 24 hours; a group's page shows its events and
 * replays, acknowledges or resolves it.
 */
export function failuresPages(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/failures', async (c) => {
    const requested = c.req.query('state') ?? 'unresolved';
    const state = (STATES as readonly string[]).includes(requested)
      ? (requested as StateFilter)
      : 'unresolved';
    const scope = await groupScope(c, services);
    const rows = (
      await read<failureGroups.FailureGroupRow>(
        services.pool,
        failureGroups.selectFailureGroups(),
        services.queryTimeoutMs,
      )
    ).filter((row) => inScope(scope, row.group));
    return c.html(
      layout({
        base: services.base,
        title: 'Failures',
        section: 'failures',
        session: pageSession(c),
        body: html`<h1>Failures by cause <small>${scopeLabel(scope)}</small></h1>
          ${groupSelector(`${services.base}/failures`, scope, { state })}
          <nav class="tabs" aria-label="Group state">
            ${STATES.map(
              (s) =>
                html`<a
                  href="${services.base}/failures?${searchParams({ state: s })}"
                  ${s === state ? html`aria-current="page"` : ''}
                  >${s}</a
                >`,
            )}
          </nav>
          <p class="hint">
            Failing effects of events not processed (retrying or dead), grouped by consumer group, effect and
            error with its varying parts (numbers, ids, emails) replaced.
          </p>
          ${failureGroupsTable(
            services.base,
            rows.filter((row) => inState(state, row)),
          )}
          <pre class="cli"><code>${cliCommand('failures')}</code></pre>`,
      }),
    );
  });

  app.get('/failures/group', async (c) => {
    const key = groupKey(c.req.query());
    actionGroup(c, key.group);
    const t = services.queryTimeoutMs;
    const [[group], events] = await Promise.all([
      read<failureGroups.FailureGroupRow>(services.pool, failureGroups.selectFailureGroups({ key }), t),
      read<{ provider: string; eventId: string; status: string; lastError: string; lastAttemptAt: Date }>(
        services.pool,
        failureGroups.selectGroupEvents(key, EXAMPLES),
        t,
      ),
    ]);
    if (!group) {
      throw new ConsoleError(
        'not_found',
        `no failing events of ${key.effect} with this error: fixed or replayed`,
      );
    }
    // The group's events, as the events list and the bulk replay's dry run filter them (and keep the filter).
    const filter = searchParams({ group: key.group, effect: key.effect, fingerprint: key.fingerprint });
    const action = (path: string, label: string) =>
      html`<form method="post" action="${services.base}/failures/${path}" class="inline">
        ${csrfField(c.get('csrf'))}
        <input type="hidden" name="group" value="${key.group}" />
        <input type="hidden" name="effect" value="${key.effect}" />
        <input type="hidden" name="fingerprint" value="${key.fingerprint}" />
        <button type="submit" class="secondary">${label}</button>
      </form>`;
    return c.html(
      layout({
        base: services.base,
        title: `Failures of ${key.effect}`,
        section: 'failures',
        session: pageSession(c),
        body: html`<h1>${key.effect} failing</h1>
          <p class="error-text">${group.fingerprint}</p>
          <dl class="facts">
            <dt>Consumer group</dt>
            <dd>${group.group}</dd>
            <dt>Events</dt>
            <dd>${count(group.events)} (${count(group.dead)} dead)</dd>
            <dt>First seen</dt>
            <dd>${utc(group.firstSeen)}</dd>
            <dt>Last seen</dt>
            <dd>${utc(group.lastSeen)}</dd>
            <dt>Last 24 hours</dt>
            <dd>${trendSvg(group.trend, 240, 40)}</dd>
            <dt>State</dt>
            <dd>
              ${statusBadge(group.state)}${group.reopened ? ' reopened: it failed again after it was resolved' : ''}
              ${group.acknowledgedBy ? html`, acknowledged by ${group.acknowledgedBy} ${utc(group.acknowledgedAt)}` : ''}
              ${group.resolvedBy ? html`, resolved by ${group.resolvedBy} ${utc(group.resolvedAt)}` : ''}
            </dd>
            <dt>An error as recorded</dt>
            <dd class="error-text">${maskText(c, services, group.sampleError)}</dd>
          </dl>
          <p>
            <a class="button" href="${services.base}/bulk?${filter}">Replay this group…</a>
            <a href="${services.base}/events?${filter}">All ${count(group.events)} of its events →</a>
            ${allowed(c, 'triage') ? html`${action('acknowledge', 'Acknowledge')} ${action('resolve', 'Resolve')}` : ''}
          </p>
          <pre class="cli"><code>${cliCommand('failures', '--effect', key.effect)}</code></pre>
          <h2>The latest ${Math.min(EXAMPLES, group.events)} of its events</h2>
          ${table(
            ['Event', 'Status', 'Last attempt (UTC)', 'Error'],
            events.map(
              (e) =>
                html`<tr>
                  <td class="id">${eventLink(services.base, e.provider, e.eventId)}</td>
                  <td>${statusBadge(e.status)}</td>
                  <td class="nowrap">${utc(e.lastAttemptAt)}</td>
                  <td class="error-text">${maskText(c, services, e.lastError)}</td>
                </tr>`,
            ),
          )}`,
      }),
    );
  });

  for (const [path, statement] of [
    ['acknowledge', failureGroups.acknowledge],
    ['resolve', failureGroups.resolve],
  ] as const) {
    app.post(`/failures/${path}`, async (c) => {
      const key = groupKey(await c.req.parseBody());
      actionGroup(c, key.group);
      await run(services.pool, statement(key, c.get('session').who));
      await audit(
        services,
        c,
        `failure_group_${path === 'acknowledge' ? 'acknowledged' : 'resolved'}`,
        key.effect,
        { ...key },
        key.group,
      );
      return c.redirect(groupHref(services.base, key), 303);
    });
  }
}
