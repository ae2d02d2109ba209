import type { failureGroups } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { count, searchParams, utc } from './format.ts';
import { statusBadge, type Html } from './layout.ts';
import { table } from './table.ts';

type FailureGroupKey = failureGroups.FailureGroupKey;
type FailureGroupRow = failureGroups.FailureGroupRow;

/** A group's page: `/failures/group?group=&effect=&fingerprint=`. */
export function groupHref(base: string, key: FailureGroupKey): string {
  return `${base}/failures/group?${searchParams({ group: key.group, effect: key.effect, fingerprint: key.fingerprint })}`;
}

/** The hourly counts of a trend, oldest first. */
function hourly(trend: Record<string, number>): number[] {
  return Array.from({ length: 24 }, (_, i) => trend[String(23 - i)] ?? 0);
}

/**
 * The last 24 hours' failures per hour, oldest left: an inline SVG (no script, no style attribute). `scale` is the
 * count a full bar stands for (a table's rows share one, so bars compare across rows); default: this trend's largest.
 */
export function trendSvg(trend: Record<string, number>, width = 120, height = 24, scale?: number): Html {
  const counts = hourly(trend);
  const max = Math.max(1, scale ?? 0, ...counts);
  const bar = width / 24;
  const total = counts.reduce((a, b) => a + b, 0);
  return html`<svg
    class="trend"
    role="img"
    viewBox="0 0 ${width} ${height}"
    width="${width}"
    height="${height}"
    aria-label="${count(total)} failures in the last 24 hours, per hour"
    data-scale="${max}"
  >
    ${counts.map((n, i) => {
      const h = n === 0 ? 0 : Math.max(1, Math.round((n / max) * height));
      return html`<rect
        x="${(i * bar).toFixed(1)}"
        y="${height - h}"
        width="${(bar - 1).toFixed(1)}"
        height="${h}"
      >
        <title>${23 - i} h ago: ${count(n)}</title>
      </rect>`;
    })}
  </svg>`;
}

/** The groups, the most events first: each names its effect, its error and how it goes, and links to its page. */
export function failureGroupsTable(base: string, groups: readonly FailureGroupRow[]): Html {
  if (groups.length === 0) return html`<p class="empty">No effect is failing.</p>`;
  const scale = Math.max(1, ...groups.flatMap((g) => hourly(g.trend)));
  return html`<div class="table-wrap">
    ${table(
      ['Group', 'Effect', 'Error', 'Events', 'Dead', 'Last 24 h', 'First seen', 'Last seen', 'State'],
      groups.map(
        (g) =>
          html`<tr>
            <td>${g.group}</td>
            <td>${g.effect}</td>
            <td class="error-text"><a href="${groupHref(base, g)}">${g.fingerprint || '(no message)'}</a></td>
            <td class="num">${count(g.events)}</td>
            <td class="num">${count(g.dead)}</td>
            <td>${trendSvg(g.trend, 120, 24, scale)}</td>
            <td class="nowrap">${utc(g.firstSeen)}</td>
            <td class="nowrap">${utc(g.lastSeen)}</td>
            <td>${statusBadge(g.state)}${g.reopened ? html` <span class="badge">reopened</span>` : ''}</td>
          </tr>`,
      ),
    )}
  </div>`;
}

/**
 * The failure group an alert is about, from its fingerprint (`kind[@group]|provider|type|effect|normalized error`,
 * `alertFingerprint`): only an effect's alert names one.
 */
export function alertGroupKey(fingerprint: string): FailureGroupKey | undefined {
  const [kind = '', , , effect, ...error] = fingerprint.split('|');
  if (!effect || error.length === 0) return undefined;
  const at = kind.indexOf('@');
  return { group: at === -1 ? 'default' : kind.slice(at + 1), effect, fingerprint: error.join('|') };
}
