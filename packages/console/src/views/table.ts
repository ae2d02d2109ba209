import { html } from 'hono/html';
import type { Html } from './layout.ts';

/** A table of rows under column headings, each heading a column header (`scope="col"`). */
export function table(headings: readonly string[], rows: readonly Html[]): Html {
  return html`<table>
    <thead>
      <tr>
        ${headings.map((heading) => html`<th scope="col">${heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
