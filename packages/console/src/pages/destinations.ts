import {
  DestinationNotFoundError,
  destinationGroup,
  listDestinations,
  readDestination,
  setDestinationPaused,
  type DestinationOverview,
} from '@webhook-inbox/operator/destinations';
import { html } from 'hono/html';
import { allowed } from '../auth/permissions.ts';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { ConsoleError } from '../errors.ts';
import { choice } from '../params.ts';
import { actionGroup, groupScope, inScope } from '../scope.ts';
import { maskText } from '../masking.ts';
import { age, cliCommand, count, eventLink, utc } from '../views/format.ts';
import { csrfField, layout, statusBadge, windowTabs, type Html } from '../views/layout.ts';
import { table } from '../views/table.ts';

const WINDOWS = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 } as const;
type Window = keyof typeof WINDOWS;

/** The console's link to a destination's page (the alerts link to it too). */
export function destinationHref(base: string, name: string): string {
  return `${base}/destinations/${encodeURIComponent(name)}`;
}

const percent = (rate: number | null) => (rate === null ? '-' : `${(rate * 100).toFixed(1)} %`);
const ms = (value: number | null) => (value === null ? '-' : `${Math.round(value)} ms`);
const waited = (services: ConsoleServices, since: Date | null) =>
  since ? age((services.now().getTime() - since.getTime()) / 1000) : '-';

/**
 * The destinations (docs/destinations.md): a list with each one's state and figures, and a page per destination
 * with its failures grouped by cause and, for a role with `triage`, pause and resume (audited).
 */
export function destinationsPages(app: ConsoleApp, services: ConsoleServices): void {
  const base = services.base;

  app.get('/destinations', async (c) => {
    const window: Window = choice('window', c.req.query('window'), WINDOWS, '24h');
    const scope = await groupScope(c, services);
    const since = new Date(services.now().getTime() - WINDOWS[window]);
    const rows = (await listDestinations(services.pool, since)).filter((d) => inScope(scope, d.group));
    return c.html(
      layout({
        base,
        title: 'Destinations',
        section: 'destinations',
        session: pageSession(c),
        body: html`<h1>Destinations</h1>
          ${windowTabs(`${base}/destinations`, windowChoices(), window, 'Window')}
          ${
            rows.length === 0
              ? html`<p class="empty">No destination: no worker started with WEBHOOK_DESTINATIONS_FILE.</p>`
              : table(
                  [
                    'Destination',
                    'Group',
                    'State',
                    `Success (${window})`,
                    'Attempts',
                    'Pending',
                    'Oldest pending',
                    'p50',
                    'p95',
                    'p99',
                  ],
                  rows.map(
                    (d) =>
                      html`<tr>
                        <td><a href="${destinationHref(base, d.name)}">${d.name}</a></td>
                        <td>${d.group}</td>
                        <td>${statusBadge(d.state)}</td>
                        <td class="num">${percent(d.successRate)}</td>
                        <td class="num">${count(d.attempts)}</td>
                        <td class="num">${count(d.pending)}</td>
                        <td class="num">${waited(services, d.oldestPending)}</td>
                        <td class="num">${ms(d.p50Ms)}</td>
                        <td class="num">${ms(d.p95Ms)}</td>
                        <td class="num">${ms(d.p99Ms)}</td>
                      </tr>`,
                  ),
                )
          }
          <pre class="cli"><code>${cliCommand('destinations')}</code></pre>`,
      }),
    );
  });

  app.get('/destinations/:name', async (c) => {
    const name = c.req.param('name');
    const window: Window = choice('window', c.req.query('window'), WINDOWS, '24h');
    const since = new Date(services.now().getTime() - WINDOWS[window]);
    const { destination: d, causes } = await found(() => readDestination(services.pool, name, since));
    actionGroup(c, d.group);
    return c.html(
      layout({
        base,
        title: `Destination ${d.name}`,
        section: 'destinations',
        session: pageSession(c),
        body: html`<h1>Destination ${d.name} ${statusBadge(d.state)}</h1>
          ${windowTabs(destinationHref(base, d.name), windowChoices(), window, 'Window')}
          ${facts(services, d, window)} ${pauseForm(c, services, d)}
          <section aria-labelledby="h-causes">
            <h2 id="h-causes">Failures by cause, last ${window}</h2>
            ${
              causes.length === 0
                ? html`<p class="empty">No failed delivery in the last ${window}.</p>`
                : table(
                    [
                      'Cause',
                      'Attempts',
                      'Events',
                      'Last HTTP status',
                      'Last seen (UTC)',
                      'An error',
                      'Event',
                    ],
                    causes.map(
                      (cause) =>
                        html`<tr>
                          <td class="error-text">${cause.fingerprint}</td>
                          <td class="num">${count(cause.attempts)}</td>
                          <td class="num">${count(cause.events)}</td>
                          <td class="num">${cause.lastStatus ?? 'no answer'}</td>
                          <td class="nowrap">${utc(cause.lastSeen)}</td>
                          <td class="error-text">${maskText(c, services, cause.sampleError)}</td>
                          <td class="id">${eventLink(base, cause.example[0], cause.example[1])}</td>
                        </tr>`,
                    ),
                  )
            }
          </section>
          <pre class="cli"><code>${cliCommand('destinations')}</code></pre>`,
      }),
    );
  });

  for (const action of ['pause', 'resume'] as const) {
    app.post(`/destinations/:name/${action}`, async (c) => {
      const name = c.req.param('name');
      actionGroup(c, await destinationGroup(services.pool, name));
      await found(() => setDestinationPaused(services.pool, c.get('principal'), name, action === 'pause'));
      return c.redirect(destinationHref(base, name), 303);
    });
  }
}

function windowChoices(): Array<[string, string]> {
  return (Object.keys(WINDOWS) as Window[]).map((w) => [w, `last ${w}`]);
}

async function found<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DestinationNotFoundError) throw new ConsoleError('not_found', error.message);
    throw error;
  }
}

function facts(services: ConsoleServices, d: DestinationOverview, window: string): Html {
  return html`<dl class="facts">
    <dt>URL</dt>
    <dd class="id">${d.url}</dd>
    <dt>Consumer group</dt>
    <dd>${d.group}</dd>
    <dt>State</dt>
    <dd>
      ${statusBadge(d.state)}
      ${d.state === 'open' ? 'circuit open' : ''}${d.reason ? html`: ${d.reason}` : ''}
      ${d.state === 'open' && d.probeAt ? html`, next probe ${utc(d.probeAt)}` : ''}
    </dd>
    <dt>Failures in a row</dt>
    <dd>${count(d.consecutiveFailures)}</dd>
    <dt>Success rate, last ${window}</dt>
    <dd>
      ${percent(d.successRate)} of ${count(d.attempts)} attempts (${count(d.failed)} failed, ${count(d.dead)}
      given up)
    </dd>
    <dt>Latency p50 / p95 / p99</dt>
    <dd>${ms(d.p50Ms)} / ${ms(d.p95Ms)} / ${ms(d.p99Ms)}</dd>
    <dt>Backlog</dt>
    <dd>${count(d.pending)} pending, the oldest received ${waited(services, d.oldestPending)} ago</dd>
    <dt>Last success</dt>
    <dd>${utc(d.lastSuccessAt) || '-'}</dd>
    <dt>Last failure</dt>
    <dd>${utc(d.lastFailureAt) || '-'}</dd>
  </dl>`;
}

function pauseForm(c: ConsoleContext, services: ConsoleServices, d: DestinationOverview): Html | string {
  if (!allowed(c, 'triage')) return '';
  const action = d.state === 'paused' ? 'resume' : 'pause';
  return html`<form method="post" action="${destinationHref(services.base, d.name)}/${action}" class="inline">
    ${csrfField(c.get('csrf'))}
    <button type="submit" class="${action === 'pause' ? 'danger' : ''}">
      ${action === 'pause' ? 'Pause deliveries' : 'Resume deliveries'}
    </button>
  </form>`;
}
