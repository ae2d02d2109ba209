import { deliveryCounts, inboxSamples } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import type { ConsoleServices } from '../context.ts';
import { read } from '../db.ts';
import { age, count, optionalCount, utc } from '../views/format.ts';
import type { Html } from '../views/layout.ts';

/** A window of the overview's charts: its buckets' starts (epoch ms, oldest first) and their width. */
interface ChartWindow {
  starts: number[];
  bucketSeconds: number;
  label: string;
}

/** What one chart draws: x in epoch seconds, one array of values per name (null: no data for that point). */
export interface Series {
  x: number[];
  names: readonly string[];
  values: (number | null)[][];
}

/** The kinds of webhook request the overview charts (`deliveriesPerBucket`). */
const REQUEST_KINDS = ['accepted', 'duplicate', 'refused', 'not recorded'] as const;
const ROWS_SHOWN = 15;

interface Sample {
  minute: Date;
  jobsWaiting: number;
  jobsActive: number;
  oldestSeconds: number;
  failed: number;
  dead: number;
  failingEffects: Record<string, number>;
}

/**
 * The overview's charts over time, from the per-minute history the receivers write (`webhook_delivery_counts`,
 * `inbox_samples`): webhook requests by kind, the queue's backlog and the age of the oldest waiting event, failed
 * and dead events, and failing effects by name. A gauge's point is the last sample of its bucket; a bucket with
 * no sample (no receiver was running) is a gap, not a zero.
 */
export async function historyCharts(services: ConsoleServices, window: ChartWindow): Promise<Html> {
  const { starts, bucketSeconds, label } = window;
  const since = new Date(starts[0] ?? 0);
  const [requests, samples] = await Promise.all([
    read<{ bucket: Date; kind: string; n: number }>(
      services.pool,
      deliveryCounts.countPerBucket(since, bucketSeconds),
      services.queryTimeoutMs,
    ),
    read<Sample>(services.pool, inboxSamples.selectSamplesSince(since), services.queryTimeoutMs),
  ]);
  const index = new Map(starts.map((at, i) => [at, i]));
  const zeros = () => starts.map(() => 0);
  const byKind = Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, zeros()]));
  for (const row of requests) {
    const i = index.get(new Date(row.bucket).getTime());
    const counts = byKind[row.kind];
    if (i !== undefined && counts) counts[i] = (counts[i] ?? 0) + row.n;
  }
  const last: (Sample | null)[] = starts.map(() => null);
  const step = bucketSeconds * 1000;
  for (const sample of samples) {
    const i = Math.floor((new Date(sample.minute).getTime() - (starts[0] ?? 0)) / step);
    if (i >= 0 && i < last.length) last[i] = sample; // oldest first: the last one of a bucket stays
  }
  const gauge = (pick: (s: Sample) => number) => last.map((s) => (s ? pick(s) : null));
  const effects = [...new Set(samples.flatMap((s) => Object.keys(s.failingEffects)))].sort();
  const x = starts.map((at) => at / 1000);
  const series = (names: readonly string[], values: (number | null)[][]): Series => ({ x, names, values });

  return html`<div class="charts">
      ${chart(
        'requests',
        `Webhook requests, ${label}`,
        series(
          REQUEST_KINDS,
          REQUEST_KINDS.map((kind) => byKind[kind] ?? zeros()),
        ),
      )}
      ${chart(
        'backlog',
        `Queue backlog (jobs), ${label}`,
        series(['waiting', 'running'], [gauge((s) => s.jobsWaiting), gauge((s) => s.jobsActive)]),
      )}
      ${chart(
        'oldest',
        `Oldest event waiting (seconds), ${label}`,
        series(['oldest waiting'], [gauge((s) => s.oldestSeconds)]),
      )}
      ${chart(
        'open',
        `Failed and dead events, ${label}`,
        series(['failed', 'dead'], [gauge((s) => s.failed), gauge((s) => s.dead)]),
      )}
      ${
        effects.length === 0
          ? html`<section aria-labelledby="h-chart-effects">
              <h2 id="h-chart-effects">Effects failing, ${label}</h2>
              <p class="empty">No effect failed in this window.</p>
            </section>`
          : chart(
              'effects',
              `Effects failing (events), ${label}`,
              series(
                effects,
                effects.map((name) => gauge((s) => s.failingEffects[name] ?? 0)),
              ),
            )
      }
    </div>
    <div class="table-wrap">
      <table class="history">
        <caption>
          Requests and backlog, the newest ${ROWS_SHOWN} points
        </caption>
        <thead>
          <tr>
            <th scope="col">From (UTC)</th>
            ${REQUEST_KINDS.map((kind) => html`<th scope="col">${capitalized(kind)}</th>`)}
            <th scope="col">Jobs waiting</th>
            <th scope="col">Oldest waiting</th>
            <th scope="col">Failed</th>
            <th scope="col">Dead</th>
          </tr>
        </thead>
        <tbody>
          ${starts
            .map((at, i) => ({ at, i }))
            .slice(-ROWS_SHOWN)
            .reverse()
            .map(
              ({ at, i }) =>
                html`<tr>
                  <td class="nowrap">${utc(new Date(at)).slice(11, 16)}</td>
                  ${REQUEST_KINDS.map((kind) => html`<td class="num">${count(byKind[kind]?.[i] ?? 0)}</td>`)}
                  <td class="num">${optionalCount(last[i]?.jobsWaiting)}</td>
                  <td class="num">${last[i] ? age(last[i].oldestSeconds) : '-'}</td>
                  <td class="num">${optionalCount(last[i]?.failed)}</td>
                  <td class="num">${optionalCount(last[i]?.dead)}</td>
                </tr>`,
            )}
        </tbody>
      </table>
    </div>`;
}

/** One chart: a heading, and the element overview.js draws with uPlot from its `data-series`. */
export function chart(id: string, title: string, series: Series): Html {
  return html`<section class="chart-box" aria-labelledby="h-chart-${id}">
    <h2 id="h-chart-${id}">${title}</h2>
    <div
      class="chart"
      data-chart="${id}"
      role="img"
      aria-label="${title}: the table below holds the same numbers"
      data-series="${JSON.stringify(series)}"
    ></div>
  </section>`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
