import type { pgbossJobs } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';
import { table } from './table.ts';

/**
 * An event's pg-boss jobs, newest first, with their retries and times, in `#event-jobs`. `outOfBand`: sent along
 * with the effects' refresh (`hx-swap-oob`), so the table follows a replay's job without a reload.
 */
export function jobsTable(jobs: pgbossJobs.EventJobRow[], outOfBand = false): Html {
  return html`<div id="event-jobs" ${outOfBand ? html`hx-swap-oob="true"` : ''}>${jobsList(jobs)}</div>`;
}

function jobsList(jobs: pgbossJobs.EventJobRow[]): Html {
  if (jobs.length === 0)
    return html`<p class="empty">
      No job left in pg-boss for this event (completed jobs are deleted after their retention).
    </p>`;
  const rows = jobs.map(
    (j) =>
      html`<tr>
        <td>${j.name}</td>
        <td>${statusBadge(j.state)}</td>
        <td class="num">${j.retryCount} / ${j.retryLimit}</td>
        <td class="nowrap">${utc(j.createdOn)}</td>
        <td class="nowrap">${utc(j.startedOn)}</td>
        <td class="nowrap">${utc(j.completedOn)}</td>
        <td class="nowrap">${j.state === 'retry' || j.state === 'created' ? utc(j.startAfter) : ''}</td>
      </tr>`,
  );
  return html`<div class="table-wrap">
    ${table(['Queue', 'State', 'Retries', 'Created', 'Started', 'Finished', 'Next try'], rows)}
  </div>`;
}
