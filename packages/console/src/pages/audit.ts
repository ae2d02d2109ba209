import { auditLog } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import type { ConsoleApp, ConsoleServices } from '../context.ts';
import { read } from '../db.ts';
import { utc } from '../views/format.ts';
import { layout } from '../views/layout.ts';

const PAGE_SIZE = 100;

/** Who did what, newest first: sign-ins (refused ones too), replays, bulk replays and their cancellations. */
export function auditPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/audit', async (c) => {
    const before = Number(c.req.query('before'));
    const rows = await read<{
      id: number;
      at: Date;
      actor: string;
      action: string;
      target: string | null;
      details: Record<string, unknown>;
      remoteAddress: string | null;
    }>(
      services.pool,
      auditLog.listAudit(PAGE_SIZE + 1, Number.isSafeInteger(before) && before > 0 ? before : undefined),
      services.queryTimeoutMs,
    );
    const page = rows.slice(0, PAGE_SIZE);
    const last = page.at(-1);
    return c.html(
      layout({
        base: services.base,
        title: 'Audit log',
        section: 'audit',
        session: { who: c.get('session').who, csrf: c.get('csrf') },
        body: html`<h1>Audit log</h1>
          <div class="table-wrap">
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Details</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                ${page.map(
                  (r) =>
                    html`<tr>
                      <td class="nowrap">${utc(r.at)}</td>
                      <td>${r.actor}</td>
                      <td><code>${r.action}</code></td>
                      <td class="id">${r.target ?? ''}</td>
                      <td class="details"><code>${JSON.stringify(r.details)}</code></td>
                      <td>${r.remoteAddress ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>
          ${
            rows.length > PAGE_SIZE && last
              ? html`<nav class="pager"><a href="${services.base}/audit?before=${last.id}">Older →</a></nav>`
              : ''
          }`,
      }),
    );
  });
}
