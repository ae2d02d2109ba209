import { html } from 'hono/html';
import type { GroupScope } from '../scope.ts';
import type { Html } from './layout.ts';

/**
 * The consumer group selector: a GET form to the page itself, `group` empty for all groups. The choice is
 * remembered (`GROUP_COOKIE`), so the other pages open on it; `hidden` keeps the page's other parameters.
 */
export function groupSelector(action: string, scope: GroupScope, hidden: Record<string, string> = {}): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}" ${(scope.selected ?? '') === value ? html`selected` : ''}>
      ${label}
    </option>`;
  return html`<form class="group-selector" method="get" action="${action}">
    ${Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
    <label for="g-group">Consumer group</label>
    <select id="g-group" name="group">
      ${option('', scope.limit ? `all my groups (${scope.choices.join(', ')})` : 'all groups')}
      ${scope.choices.map((group) => option(group, group))}
    </select>
    <button type="submit" class="secondary">Show</button>
  </form>`;
}

/** The scope in words, for a page's heading: `billing`, or `all groups`. */
export function scopeLabel(scope: GroupScope): string {
  if (scope.selected !== null) return `group ${scope.selected}`;
  return scope.limit ? `groups ${scope.choices.join(', ')}` : 'all groups';
}
