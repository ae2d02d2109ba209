import type { AttemptRow } from '@webhook-inbox/inbox/event-store';
import { html } from 'hono/html';
import { utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';
import { table } from './table.ts';

/** Two attempts to compare, as the event page's form names them: `effect#attempt`. */
interface AttemptPair {
  a: string;
  b: string;
}

/** An attempt's name in the compare form and the page's query (`?a=sendWelcomeEmail%233`). */
function attemptName(row: Pick<AttemptRow, 'effect' | 'attempt'>): string {
  return `${row.effect}#${row.attempt}`;
}

/**
 * Every kept attempt of each effect as a timeline (when, how long, how it ended, the error, the worker and the
 * job), with a plain GET form choosing two of them (A and B) to compare side by side: no script needed.
 */
export function attemptsSection(
  base: string,
  key: { provider: string; eventId: string },
  attempts: readonly AttemptRow[],
  pair: Partial<AttemptPair>,
): Html {
  if (attempts.length === 0) return html`<p class="empty">No attempt recorded.</p>`;
  const byEffect = new Map<string, AttemptRow[]>();
  for (const row of attempts) byEffect.set(row.effect, [...(byEffect.get(row.effect) ?? []), row]);
  const a = attempts.find((row) => attemptName(row) === pair.a);
  const b = attempts.find((row) => attemptName(row) === pair.b);
  return html`${a && b ? comparison(a, b) : ''}
    <form method="get" action="${base}/event#h-attempts" class="attempts">
      <input type="hidden" name="provider" value="${key.provider}" />
      <input type="hidden" name="id" value="${key.eventId}" />
      ${[...byEffect].map(
        ([effect, rows]) =>
          html`<h3>${effect}</h3>
            ${table(
              ['A', 'B', '#', 'outcome', 'started (UTC)', 'duration', 'error', 'answer', 'worker', 'job'],
              rows.map(
                (row, i) =>
                  html`<tr>
                    <td>${choice('a', row, pair.a, i === rows.length - 2)}</td>
                    <td>${choice('b', row, pair.b, i === rows.length - 1)}</td>
                    <td class="num">${row.attempt}</td>
                    <td>${statusBadge(row.outcome)}</td>
                    <td class="nowrap">${utc(row.startedAt)}</td>
                    <td class="num">${row.durationMs} ms</td>
                    <td class="error-text">${row.error ?? ''}</td>
                    <td>${answerOf(row)}</td>
                    <td class="id">${row.worker}</td>
                    <td class="id">${row.jobId ?? ''}</td>
                  </tr>`,
              ),
            )}`,
      )}
      ${attempts.length > 1 ? html`<button type="submit">Compare A and B</button>` : ''}
    </form>`;
}

/** A destination's delivery: the answer's status and the start of its body (empty for other effects). */
function answerOf(row: AttemptRow): Html | string {
  if (row.responseStatus === null && row.responseExcerpt === null) return '';
  return html`${row.responseStatus === null ? '' : html`<span class="num">HTTP ${row.responseStatus}</span>`}
  ${row.responseExcerpt ? html`<pre class="excerpt">${row.responseExcerpt}</pre>` : ''}`;
}

function choice(side: 'a' | 'b', row: AttemptRow, chosen: string | undefined, byDefault: boolean): Html {
  const name = attemptName(row);
  const checked = chosen === undefined ? byDefault : chosen === name;
  return html`<input
    type="radio"
    name="${side}"
    value="${name}"
    aria-label="${side.toUpperCase()}: ${row.effect} attempt ${row.attempt}"
    ${checked ? 'checked' : ''}
  />`;
}

/** Two attempts field by field; a field that differs is marked. */
function comparison(a: AttemptRow, b: AttemptRow): Html {
  const fields: Array<[string, (row: AttemptRow) => string]> = [
    ['effect', (row) => row.effect],
    ['attempt', (row) => String(row.attempt)],
    ['outcome', (row) => row.outcome],
    ['started (UTC)', (row) => utc(row.startedAt)],
    ['finished (UTC)', (row) => utc(row.finishedAt)],
    ['duration', (row) => `${row.durationMs} ms`],
    ['error', (row) => row.error ?? '(none)'],
    ['HTTP status', (row) => (row.responseStatus === null ? '(none)' : String(row.responseStatus))],
    ['answer excerpt', (row) => row.responseExcerpt ?? '(none)'],
    ['worker', (row) => row.worker],
    ['job', (row) => row.jobId ?? ''],
  ];
  return html`<section class="compare" aria-label="Attempt comparison">
    ${table(
      ['', `A: ${attemptName(a)}`, `B: ${attemptName(b)}`],
      fields.map(([label, value]) => {
        const differs = value(a) !== value(b);
        return html`<tr ${differs ? html`class="differs"` : ''}>
          <th scope="row">${label}${differs ? html` <span class="badge">differs</span>` : ''}</th>
          <td class="id">${value(a)}</td>
          <td class="id">${value(b)}</td>
        </tr>`;
      }),
    )}
  </section>`;
}
