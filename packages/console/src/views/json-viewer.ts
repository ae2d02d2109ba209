import { html } from 'hono/html';
import type { Html } from './layout.ts';

/**
 * A payload as a tree that folds: each object and array a `<details>` (open down to `OPEN_DEPTH`), each value on
 * its line as `"key": value`, so the page reads without JavaScript and the browser's find works on it. A small
 * script (assets/json-viewer.js, allowed by the Content-Security-Policy as a file of the console's own) adds Copy,
 * Expand all and Collapse all. Numbers are shown as written (jsonb keeps every digit; so does this).
 */

const OPEN_DEPTH = 3;

/** A number as its source text (`JSON.parse`'s reviver context), so 20 digits stay 20 digits. */
class JsonNumber {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

type Json = string | boolean | null | JsonNumber | Json[] | { [key: string]: Json };

function parse(text: string): Json {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' ? new JsonNumber(context?.source ?? String(value)) : value,
  ) as Json;
}

export function jsonViewer(text: string): Html {
  let value: Json;
  try {
    value = parse(text);
  } catch {
    return html`<pre class="payload" tabindex="0"><code>${text}</code></pre>`;
  }
  return html`<div class="json-viewer" data-json-viewer>
    <div class="json-tools" hidden>
      <button type="button" data-json-action="copy">Copy JSON</button>
      <button type="button" data-json-action="expand">Expand all</button>
      <button type="button" data-json-action="collapse">Collapse all</button>
      <span class="json-copied" role="status"></span>
    </div>
    <div class="json-tree payload" tabindex="0">${node(null, value, 0, true)}</div>
    <template data-json-source>${text}</template>
  </div>`;
}

function node(key: string | null, value: Json, depth: number, last: boolean): Html {
  const label = key === null ? '' : html`<span class="json-key">${JSON.stringify(key)}</span>: `;
  const comma = last ? '' : ',';
  if (value === null || typeof value !== 'object' || value instanceof JsonNumber) {
    return html`<div class="json-line">${label}${scalar(value)}${comma}</div>`;
  }
  const entries: Array<[string | null, Json]> = Array.isArray(value)
    ? value.map((item) => [null, item])
    : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) return html`<div class="json-line">${label}${open}${close}${comma}</div>`;
  const size = Array.isArray(value) ? `${entries.length} items` : `${entries.length} keys`;
  return html`<details class="json-node" ${depth < OPEN_DEPTH ? html`open` : ''}>
    <summary>${label}${open}<span class="json-size"> ${size} </span></summary>
    <div class="json-children">
      ${entries.map(([k, v], i) => node(k, v, depth + 1, i === entries.length - 1))}
    </div>
    <div class="json-line">${close}${comma}</div>
  </details>`;
}

function scalar(value: string | boolean | null | JsonNumber): Html {
  if (value instanceof JsonNumber) return html`<span class="json-number">${value.source}</span>`;
  if (typeof value === 'string') return html`<span class="json-string">${JSON.stringify(value)}</span>`;
  return html`<span class="json-literal">${String(value)}</span>`;
}
