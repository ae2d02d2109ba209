/** Small formatting helpers shared by the pages. Every time is shown in UTC, as the filters take it. */
import { html } from 'hono/html';

export function utc(value: Date | string | null | undefined): string {
  if (!value) return '';
  const date = typeof value === 'string' ? new Date(value) : value;
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Every count the console shows, in one format: `5,001`. */
export function count(n: number | bigint): string {
  return n.toLocaleString('en-US');
}

/** A count that may be missing (no sample at that point): `-` then. */
export function optionalCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '-' : count(n);
}

export function age(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '-';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

/** A word for the shell: quoted when it holds anything a shell would read (Shopify keys hold `:` and `/`). */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_.,:/@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The CLI line that does what a console button does. */
export function cliCommand(...words: string[]): string {
  return ['npx', 'webhook-inbox', ...words.map(shellWord)].join(' ');
}

/** A query string (without the `?`). */
export function searchParams(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

/** An event's page. */
export function eventHref(base: string, provider: string, eventId: string): string {
  return `${base}/event?${searchParams({ provider, id: eventId })}`;
}

/** A link to an event's page, named by its provider and id. */
export function eventLink(base: string, provider: string, eventId: string) {
  return html`<a href="${eventHref(base, provider, eventId)}">${provider} ${eventId}</a>`;
}
