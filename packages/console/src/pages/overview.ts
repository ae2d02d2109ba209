import { EVENTS_QUEUE } from '@webhook-inbox/inbox/queue';
import { html } from 'hono/html';
import type { ConsoleApp, ConsoleServices } from '../context.ts';
import { read } from '../db.ts';
import { backlog, failingEffects, openCounts, perMinute, statusCounts } from '../sql/overview.ts';
import { age, utc } from '../views/format.ts';
import { layout, statusBadge, type Html } from '../views/layout.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTES_SHOWN = 15;

/** The overview: what came in, what waits, what fails; its figures refresh every 5 seconds. */
export function overviewPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/', async (c) =>
    c.html(
      layout({
        base: services.base,
        title: 'Overview',
        section: 'overview',
        session: { who: c.get('session').who, csrf: c.get('csrf') },
        body: html`<h1>Overview</h1>
          ${await figures(services)}`,
      }),
    ),
  );
  app.get('/overview/figures', async (c) => c.html(await figures(services)));
}

async function figures(services: ConsoleServices): Promise<Html> {
  const now = services.now();
  const t = services.queryTimeoutMs;
  const [byStatus, [open], [queue], effects, minutes] = await Promise.all([
    read<{ status: string; n: number }>(services.pool, statusCounts(new Date(now.getTime() - DAY_MS)), t),
    read<{ failed: number; dead: number }>(services.pool, openCounts(), t),
    read<{ ready: number; deferred: number; active: number; oldestReadySeconds: number | null }>(
      services.pool,
      backlog(EVENTS_QUEUE),
      t,
    ),
    read<{ effect: string; n: number; sampleError: string | null }>(services.pool, failingEffects(), t),
    read<{ minute: Date; status: string; n: number }>(
      services.pool,
      perMinute(new Date(now.getTime() - HOUR_MS)),
      t,
    ),
  ]);
  const grid = minuteGrid(now, minutes);
  return html`<div
    id="figures"
    hx-get="${services.base}/overview/figures"
    hx-trigger="every 5s"
    hx-swap="outerHTML"
  >
    <p class="hint">Updated ${utc(now)}; refreshes every 5 seconds.</p>
    <div class="cards">
      <section class="card" aria-labelledby="h-open">
        <h2 id="h-open">Needs attention</h2>
        <p>
          <a href="${services.base}/events?status=failed"
            ><strong class="big">${open?.failed ?? 0}</strong> failed</a
          >
          (retrying)
        </p>
        <p>
          <a href="${services.base}/dead"><strong class="big">${open?.dead ?? 0}</strong> dead</a>
        </p>
      </section>
      <section class="card" aria-labelledby="h-backlog">
        <h2 id="h-backlog">Queue backlog</h2>
        <p>
          <strong class="big">${queue?.ready ?? 0}</strong> jobs ready, oldest waiting
          ${age(queue?.oldestReadySeconds)}
        </p>
        <p>${queue?.active ?? 0} running, ${queue?.deferred ?? 0} waiting for a retry</p>
      </section>
      <section class="card" aria-labelledby="h-day">
        <h2 id="h-day">Last 24 hours</h2>
        <ul class="plain">
          ${byStatus.map(
            (s) =>
              html`<li>
                ${statusBadge(s.status)}
                <a href="${services.base}/events?status=${s.status}&from=24h">${s.n.toLocaleString('en')}</a>
              </li>`,
          )}
        </ul>
      </section>
    </div>
    <section aria-labelledby="h-effects">
      <h2 id="h-effects">Effects failing</h2>
      ${
        effects.length === 0
          ? html`<p class="empty">No effect is failing.</p>`
          : html`<div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Effect</th>
                    <th scope="col">Events</th>
                    <th scope="col">An error</th>
                  </tr>
                </thead>
                <tbody>
                  ${effects.map(
                    (e) =>
                      html`<tr>
                        <td>${e.effect}</td>
                        <td class="num">${e.n}</td>
                        <td class="error-text">${e.sampleError ?? ''}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
    </section>
    <section aria-labelledby="h-minutes">
      <h2 id="h-minutes">Events received per minute (last ${MINUTES_SHOWN} minutes, by status now)</h2>
      <div class="table-wrap">
        <table class="minutes">
          <thead>
            <tr>
              <th scope="col">Minute (UTC)</th>
              <th scope="col">Received</th>
              <th scope="col">Processed</th>
              <th scope="col">Failed</th>
              <th scope="col">Dead</th>
              <th scope="col">Waiting</th>
            </tr>
          </thead>
          <tbody>
            ${grid.map(
              (m) =>
                html`<tr>
                  <td class="nowrap">${m.label}</td>
                  <td class="num">
                    <meter min="0" max="${grid.max}" value="${m.total}" aria-label="received">
                      ${m.total}
                    </meter>
                    ${m.total}
                  </td>
                  <td class="num">${m.processed}</td>
                  <td class="num">${m.failed}</td>
                  <td class="num">${m.dead}</td>
                  <td class="num">${m.waiting}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>
  </div>`;
}

interface MinuteRow {
  label: string;
  total: number;
  processed: number;
  failed: number;
  dead: number;
  waiting: number;
}

function minuteGrid(
  now: Date,
  rows: { minute: Date; status: string; n: number }[],
): MinuteRow[] & { max: number } {
  const start = Math.floor(now.getTime() / 60_000) * 60_000;
  const grid: MinuteRow[] = [];
  for (let i = 0; i < MINUTES_SHOWN; i++) {
    const at = start - i * 60_000;
    const of = (status: string) =>
      rows
        .filter((r) => new Date(r.minute).getTime() === at && r.status === status)
        .reduce((n, r) => n + r.n, 0);
    const processed = of('processed');
    const failed = of('failed');
    const dead = of('dead');
    const waiting = of('received') + of('processing');
    grid.push({
      label: utc(new Date(at)).slice(11, 16),
      total: processed + failed + dead + waiting,
      processed,
      failed,
      dead,
      waiting,
    });
  }
  return Object.assign(grid, { max: Math.max(1, ...grid.map((m) => m.total)) });
}
