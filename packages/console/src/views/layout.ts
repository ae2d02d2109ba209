import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

interface LayoutOptions {
  base: string;
  title: string;
  /** Which navigation entry is current. */
  section?:
    | 'overview'
    | 'events'
    | 'failures'
    | 'destinations'
    | 'operations'
    | 'dead'
    | 'alerts'
    | 'audit'
    | 'tokens';
  /**
   * Signed in: the operator's name, the CSRF token every htmx request sends, and the sections its role may open
   * (the navigation shows those only).
   */
  session?: { who: string; csrf: string; sections?: readonly string[] };
  body: Html;
  /** The page draws charts: uPlot and the overview's script are loaded. */
  charts?: boolean;
  /** Show the sections' links even without a session (an error page that may follow a failed session check). */
  navigation?: boolean;
}

export const NAV = [
  ['overview', '', 'Overview'],
  ['events', '/events', 'Events'],
  ['failures', '/failures', 'Failures'],
  ['destinations', '/destinations', 'Destinations'],
  ['dead', '/dead', 'Dead letters'],
  ['operations', '/operations', 'Bulk replays'],
  ['alerts', '/alerts', 'Alerts'],
  ['audit', '/audit', 'Audit log'],
  ['tokens', '/tokens', 'API tokens'],
] as const;

/**
 * The page shell. No inline script or style (the Content-Security-Policy forbids both): htmx and the stylesheet
 * come from the console's own /assets; htmx's configuration is a meta tag, and every htmx request carries the
 * CSRF token through `hx-headers`.
 */
export function layout({ base, title, section, session, body, charts, navigation }: LayoutOptions): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta
          name="htmx-config"
          content='{"includeIndicatorStyles":false,"allowEval":false,"historyCacheSize":0}'
        />
        <title>${title} · webhook-inbox console</title>
        <link rel="icon" href="${base}/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="${base}/assets/console.css" />
        <script src="${base}/assets/htmx.min.js" defer></script>
        <script src="${base}/assets/json-viewer.js" defer></script>
        <script src="${base}/assets/selection.js" defer></script>
        ${
          charts
            ? html`<link rel="stylesheet" href="${base}/assets/uplot.min.css" />
                <script src="${base}/assets/uplot.min.js" defer></script>
                <script src="${base}/assets/overview.js" defer></script>`
            : ''
        }
      </head>
      <body hx-headers="${session ? JSON.stringify({ 'X-CSRF-Token': session.csrf }) : '{}'}">
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="${base}/">webhook-inbox</a>
          ${
            session || navigation
              ? html`<nav aria-label="Sections">
                  ${NAV.filter(([key]) => !session?.sections || session.sections.includes(key)).map(
                    ([key, path, label]) =>
                      html`<a href="${base}${path || '/'}" ${key === section ? html`aria-current="page"` : ''}
                        >${label}</a
                      >`,
                  )}
                </nav>`
              : ''
          }
          ${
            session
              ? html`<form class="logout" method="post" action="${base}/logout">
                  <input type="hidden" name="_csrf" value="${session.csrf}" />
                  <span class="who">${session.who}</span>
                  <button type="submit">Sign out</button>
                </form>`
              : ''
          }
        </header>
        <main id="main">${body}</main>
      </body>
    </html>`;
}

/** The CSRF field every form posts. */
export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}" />`;
}

export function statusBadge(status: string): Html {
  return html`<span class="badge status-${status}">${status}</span>`;
}

/** Links choosing a time window (`?window=`), the current one marked. */
export function windowTabs(
  href: string,
  windows: Array<[key: string, label: string]>,
  current: string,
  label: string,
): Html {
  return html`<nav class="tabs" aria-label="${label}">
    ${windows.map(
      ([key, text]) =>
        html`<a
          href="${href}?${new URLSearchParams({ window: key }).toString()}"
          ${key === current ? html`aria-current="page"` : ''}
          >${text}</a
        >`,
    )}
  </nav>`;
}
