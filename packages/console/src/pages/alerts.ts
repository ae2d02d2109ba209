import { alertsSent } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { type ConsoleApp, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import { eventHref, utc } from '../views/format.ts';
import { choice } from '../params.ts';
import { layout, statusBadge, windowTabs, type Html } from '../views/layout.ts';
import { alertGroupKey, groupHref } from '../views/failure-groups.ts';

/** The windows the page offers, as `?window=`. */
const WINDOWS = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 } as const;
type Window = keyof typeof WINDOWS;
const GROUPS = 100;
const MESSAGES = 50;

/**
 * Alerts sent: what fired, grouped by problem (the alerter's fingerprint: kind, provider, type, effect and the
 * error without its varying parts), with how often and when; then the newest messages one by one. Read from
 * `alerts_sent`, which the receiver's and the worker's alerters write after each message.
 */
export function alertsPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/alerts', async (c) => {
    const window: Window = choice('window', c.req.query('window'), WINDOWS, '24h');
    const since = new Date(services.now().getTime() - WINDOWS[window]);
    const [groups, messages] = await Promise.all([
      read<alertsSent.AlertGroupRow>(
        services.pool,
        alertsSent.alertGroups(since, GROUPS),
        services.queryTimeoutMs,
      ),
      read<alertsSent.AlertMessageRow>(
        services.pool,
        alertsSent.recentAlerts(MESSAGES),
        services.queryTimeoutMs,
      ),
    ]);
    const base = services.base;
    return c.html(
      layout({
        base,
        title: 'Alerts sent',
        section: 'alerts',
        session: pageSession(c),
        body: html`<h1>Alerts sent</h1>
          ${windowTabs(
            `${base}/alerts`,
            (Object.keys(WINDOWS) as Window[]).map((w) => [w, `last ${w}`]),
            window,
            'Window',
          )}
          <section aria-labelledby="h-groups">
            <h2 id="h-groups">By problem, last ${window}</h2>
            ${
              groups.length === 0
                ? html`<p class="empty">No alert in the last ${window}.</p>`
                : html`<div class="table-wrap">
                    <table class="alerts">
                      <thead>
                        <tr>
                          <th scope="col">Alert</th>
                          <th scope="col">Provider · type · effect</th>
                          <th scope="col" class="num">Alerts</th>
                          <th scope="col" class="num">Messages</th>
                          <th scope="col">First (UTC)</th>
                          <th scope="col">Last (UTC)</th>
                          <th scope="col">Latest</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${groups.map(
                          (g) =>
                            html`<tr>
                              <td><code>${g.kind}</code></td>
                              <td>${[g.provider, g.eventType, g.effect].filter(Boolean).join(' · ')}</td>
                              <td class="num">${g.occurrences}</td>
                              <td class="num">
                                ${g.messages}${g.failed ? html` (${g.failed} not delivered)` : ''}
                              </td>
                              <td class="nowrap">${utc(g.firstAt)}</td>
                              <td class="nowrap">${utc(g.lastAt)}</td>
                              <td>${headline(base, g)}${groupLink(base, g.fingerprint)}</td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>
                  </div>`
            }
          </section>
          <section aria-labelledby="h-messages">
            <h2 id="h-messages">Newest messages</h2>
            ${
              messages.length === 0
                ? html`<p class="empty">No alert has been sent.</p>`
                : html`<div class="table-wrap">
                    <table class="alert-messages">
                      <thead>
                        <tr>
                          <th scope="col">When (UTC)</th>
                          <th scope="col">From</th>
                          <th scope="col">Delivery</th>
                          <th scope="col" class="num">Alerts</th>
                          <th scope="col">Message</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${messages.map(
                          (m) =>
                            html`<tr>
                              <td class="nowrap">${utc(m.at)}</td>
                              <td>${m.service}</td>
                              <td>${statusBadge(m.outcome)}</td>
                              <td class="num">${m.occurrences}</td>
                              <td>${headline(base, m)}</td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>
                  </div>`
            }
            <p class="hint">
              <code>logged</code>: no <code>ALERT_WEBHOOK_URL</code> is set, so the alert went to the log
              only; <code>failed</code>: the webhook refused it or did not answer after every retry.
            </p>
          </section>`,
      }),
    );
  });
}

/** A link to the failure group an effect's alert is about. */
function groupLink(base: string, fingerprint: string): Html | '' {
  const key = alertGroupKey(fingerprint);
  return key ? html`<br /><a href="${groupHref(base, key)}">failure group →</a>` : '';
}

/** A message's first line, and a link to its event when it is about one. */
function headline(base: string, row: { provider: string; eventId: string | null; headline: string }): Html {
  return html`${row.headline}
  ${
    row.eventId
      ? html`<br /><a class="id" href="${eventHref(base, row.provider, row.eventId)}">${row.eventId}</a>`
      : ''
  }`;
}
