import { valuesAt } from './pointer.ts';
import { EVENT_FACTS } from './provider-paths.ts';

export { EVENT_FACTS };

/** A fact's value as text: a non-empty string, a number or a boolean as written; else `undefined`. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return undefined;
}

/**
 * The facts of an event of a provider, in the table's order: those its payload or headers hold.
 *
 * @example
 * eventFactsOf('github', { repository: { full_name: 'acme/api' } }, {})
 * // [{ label: 'Repository', value: 'acme/api' }]
 */
export function eventFactsOf(
  provider: string,
  payload: unknown,
  headers: Readonly<Record<string, string>>,
  options: { personal?: boolean } = {},
): Array<{ label: string; value: string }> {
  const facts: Array<{ label: string; value: string }> = [];
  for (const fact of EVENT_FACTS[provider] ?? []) {
    if (fact.personal && options.personal === false) continue;
    let value: string | undefined;
    for (const path of fact.paths) {
      value = valuesAt(payload, path)
        .map(scalarText)
        .find((text) => text !== undefined);
      if (value !== undefined) break;
    }
    if (value === undefined && fact.header) value = headers[fact.header];
    if (value !== undefined) facts.push({ label: fact.label, value });
  }
  return facts;
}
