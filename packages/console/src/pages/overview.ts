import { DEFAULT_GROUP, EVENTS_QUEUE, queuesOf } from '@webhook-inbox/inbox/queue';
import { webhookEvents } from '@webhook-inbox/inbox/sql';
import { coveredGroups, groupScope, inScope, type GroupScope } from '../scope.ts';
import { groupSelector, scopeLabel } from '../views/group-selector.ts';
import { failureGroups, pgbossJobs } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { type ConsoleApp, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import { chart, historyCharts } from './overview-history.ts';
import { failureGroupsTable } from '../views/failure-groups.ts';
import { age, count, searchParams, utc } from '../views/format.ts';
import { choice } from '../params.ts';
import { layout, statusBadge, windowTabs, type Html } from '../views/layout.ts';

const DAY_MS = 86_400_000;

/** The chart's windows (`?window=`): how far back, and the width of one point. */
const WINDOWS = {
  '1h': { ms: 3_600_000, bucketSeconds: 60, label: 'last hour, per minute' },
  '24h': { ms: DAY_MS, bucketSeconds: 600, label: 'last 24 hours, per 10 minutes' },
} as const;
type Window = keyof typeof WINDOWS;
const STATUSES = ['processed', 'failed', 'dead', 'waiting'] as const;
const ROWS_SHOWN = 15;
const GROUPS_SHOWN = 10;

/**
 * The overview: what came in, what waits, what fails, now and over the last hour or day; its figures and charts
 * refresh every 5 seconds.
 */
export function overviewPage(app: ConsoleApp, services: ConsoleServices): void {
  const windowOf = (requested: string | undefined): Window => choice('window', requested, WINDOWS, '1h');
  app.get('/', async (c) => {
    const window = windowOf(c.req.query('window'));
    const scope = await groupScope(c, services);
    return c.html(
      layout({
        base: services.base,
        title: 'Overview',
        section: 'overview',
        session: pageSession(c),
        charts: true,
        body: html`<h1>Overview <small>${scopeLabel(scope)}</small></h1>
          ${groupSelector(`${services.base}/`, scope, { window })}
          ${windowTabs(
            `${services.base}/`,
            (Object.keys(WINDOWS) as Window[]).map((w) => [w, WINDOWS[w].label]),
            window,
            'Chart window',
          )}
          ${await figures(services, window, scope)}`,
      }),
    );
  });
  app.get('/overview/figures', async (c) =>
    c.html(await figures(services, windowOf(c.req.query('window')), await groupScope(c, services))),
  );
}

/**
 * The scope's failed and dead events (each counted once, however many of the scope's groups it failed in), and its
 * queues' backlog, summed over the scope's groups.
 */
async function openCounts(services: ConsoleServices, scope: GroupScope) {
  const t = services.queryTimeoutMs;
  const groups = coveredGroups(scope);
  const [[open], backlogs] = await Promise.all([
    read<{ failed: number; dead: number }>(services.pool, webhookEvents.countOpen(groups), t),
    Promise.all(
      groups.map(async (group) => {
        const [row] = await read<Backlog>(
          services.pool,
          pgbossJobs.selectBacklog(group === DEFAULT_GROUP ? EVENTS_QUEUE : queuesOf(group).events),
          t,
        );
        return row;
      }),
    ),
  ]);
  const present = backlogs.filter((row): row is Backlog => row !== undefined);
  const oldest = present.map((row) => row.oldestReadySeconds).filter((s): s is number => s !== null);
  return {
    open: { failed: open?.failed ?? 0, dead: open?.dead ?? 0 },
    queue: {
      ready: present.reduce((a, r) => a + r.ready, 0),
      deferred: present.reduce((a, r) => a + r.deferred, 0),
      active: present.reduce((a, r) => a + r.active, 0),
      oldestReadySeconds: oldest.length ? Math.max(...oldest) : null,
    },
  };
}

interface Backlog {
  ready: number;
  deferred: number;
  active: number;
  oldestReadySeconds: number | null;
}

async function figures(services: ConsoleServices, window: Window, scope: GroupScope): Promise<Html> {
  const now = services.now();
  const { ms, bucketSeconds, label } = WINDOWS[window];
  const t = services.queryTimeoutMs;
  const starts = bucketStarts(now, ms, bucketSeconds);
  // The received events by their own status count every group's events: shown to a principal that sees them all.
  const everything = scope.limit === null;
  const [byStatus, { open, queue }, groups, buckets, history] = await Promise.all([
    everything
      ? read<{ status: string; n: number }>(
          services.pool,
          webhookEvents.countByStatusSince(new Date(now.getTime() - DAY_MS)),
          t,
        )
      : [],
    openCounts(services, scope),
    read<failureGroups.FailureGroupRow>(services.pool, failureGroups.selectFailureGroups(), t),
    everything
      ? read<{ bucket: Date; status: string; n: number }>(
          services.pool,
          webhookEvents.countPerBucket(new Date(starts[0] ?? 0), bucketSeconds),
          t,
        )
      : [],
    everything ? historyCharts(services, { starts, bucketSeconds, label }) : html``,
  ]);
  const unresolved = groups.filter((g) => g.state !== 'resolved' && inScope(scope, g.group));
  const group = scope.selected ?? '';
  const grid = bucketGrid(starts, buckets);
  const series = {
    x: grid.map((b) => b.at / 1000),
    names: STATUSES,
    values: STATUSES.map((status) => grid.map((b) => b[status])),
  };
  return html`<div
    id="figures"
    hx-get="${services.base}/overview/figures?${searchParams({ window, group })}"
    hx-trigger="every 5s"
    hx-swap="outerHTML"
  >
    <p class="hint">Updated ${utc(now)}; refreshes every 5 seconds.</p>
    <div class="cards">
      <section class="card" aria-labelledby="h-open">
        <h2 id="h-open">Needs attention</h2>
        <p>
          <a href="${services.base}/events?${searchParams({ status: 'failed', group })}"
            ><strong class="big" data-count="failed">${count(open.failed)}</strong> failed</a
          >
          (retrying)
        </p>
        <p>
          <a href="${services.base}/dead?${searchParams({ group })}"
            ><strong class="big" data-count="dead">${count(open.dead)}</strong> dead</a
          >
        </p>
      </section>
      <section class="card" aria-labelledby="h-backlog">
        <h2 id="h-backlog">Queue backlog</h2>
        <p>
          <strong class="big">${count(queue.ready)}</strong> jobs ready, oldest waiting
          ${age(queue.oldestReadySeconds)}
        </p>
        <p>${count(queue.active)} running, ${count(queue.deferred)} waiting for a retry</p>
      </section>
      ${
        everything
          ? html`<section class="card" aria-labelledby="h-day">
              <h2 id="h-day">Last 24 hours</h2>
              <ul class="plain">
                ${byStatus.map(
                  (s) =>
                    html`<li>
                      ${statusBadge(s.status)}
                      <a href="${services.base}/events?status=${s.status}&from=24h">${count(s.n)}</a>
                    </li>`,
                )}
              </ul>
            </section>`
          : ''
      }
    </div>
    <section aria-labelledby="h-failures">
      <h2 id="h-failures">Failing, by cause</h2>
      ${failureGroupsTable(services.base, unresolved.slice(0, GROUPS_SHOWN))}
      ${
        unresolved.length > GROUPS_SHOWN
          ? html`<p>
              <a href="${services.base}/failures">All ${count(unresolved.length)} open failure groups →</a>
            </p>`
          : ''
      }
    </section>
    ${history}
    ${
      everything
        ? html`<div class="by-status">
            ${chart('statuses', `Events received, ${label} (by status now)`, series)}
            <div class="table-wrap">
              <table class="minutes">
                <caption>
                  Events received by status now, the newest ${ROWS_SHOWN} points
                </caption>
                <thead>
                  <tr>
                    <th scope="col">From (UTC)</th>
                    <th scope="col">Received</th>
                    <th scope="col">Processed</th>
                    <th scope="col">Failed</th>
                    <th scope="col">Dead</th>
                    <th scope="col">Waiting</th>
                  </tr>
                </thead>
                <tbody>
                  ${grid
                    .slice(-ROWS_SHOWN)
                    .reverse()
                    .map(
                      (b) =>
                        html`<tr>
                          <td class="nowrap">${utc(new Date(b.at)).slice(11, 16)}</td>
                          <td class="num">${count(b.total)}</td>
                          <td class="num">${count(b.processed)}</td>
                          <td class="num">${count(b.failed)}</td>
                          <td class="num">${count(b.dead)}</td>
                          <td class="num">${count(b.waiting)}</td>
                        </tr>`,
                    )}
                </tbody>
              </table>
            </div>
          </div>`
        : ''
    }
  </div>`;
}

interface Bucket {
  /** Its start, epoch ms. */
  at: number;
  total: number;
  processed: number;
  failed: number;
  dead: number;
  waiting: number;
}

/** The starts (epoch ms) of every bucket of the window, oldest first, from a whole minute. */
function bucketStarts(now: Date, windowMs: number, bucketSeconds: number): number[] {
  const origin = Math.floor((now.getTime() - windowMs) / 60_000) * 60_000;
  const starts: number[] = [];
  for (let at = origin; at <= now.getTime(); at += bucketSeconds * 1000) starts.push(at);
  return starts;
}

/** Every bucket of the window, oldest first, empty ones included (a chart needs its zeros). */
function bucketGrid(starts: number[], rows: { bucket: Date; status: string; n: number }[]): Bucket[] {
  const byStart = new Map<number, Bucket>();
  for (const at of starts) byStart.set(at, { at, total: 0, processed: 0, failed: 0, dead: 0, waiting: 0 });
  for (const row of rows) {
    const bucket = byStart.get(new Date(row.bucket).getTime());
    if (!bucket) continue;
    const key = row.status === 'received' || row.status === 'processing' ? 'waiting' : row.status;
    if (key === 'processed' || key === 'failed' || key === 'dead' || key === 'waiting') bucket[key] += row.n;
    bucket.total += row.n;
  }
  return [...byStart.values()];
}
