import type { pgbossJobs } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import { utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';

/** An event's pg-boss jobs, newest first, with their retries and times. */
export function jobsTable(jobs: pgbossJobs.EventJobRow[]): Html {
  if (jobs.length === 0)
    return html`<p class="empty">
      No job left in pg-boss for this event (completed jobs are deleted after their retention).
    </p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Queue</th>
          <th scope="col">State</th>
          <th scope="col">Retries</th>
          <th scope="col">Created</th>
          <th scope="col">Started</th>
          <th scope="col">Finished</th>
          <th scope="col">Next try</th>
        </tr>
      </thead>
      <tbody>
        ${jobs.map(
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
        )}
      </tbody>
    </table>
  </div>`;
}
