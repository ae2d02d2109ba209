import type { Context } from 'hono';
import { ConsoleError } from './errors.ts';

/**
 * Query and path parameters checked before they reach a lookup or a statement: a name is looked up among the own
 * keys of its choices only (`toString` and `__proto__` are not choices), and a number is refused before it becomes
 * one PostgreSQL cannot hold. Either way a bad value is a 400 `invalid_input` naming its field.
 */

/** `requested` when it is one of `choices`' own keys, `fallback` when absent or blank. */
export function choice<K extends string>(
  field: string,
  requested: string | undefined,
  choices: Readonly<Record<K, unknown>>,
  fallback: K,
): K {
  if (!requested) return fallback;
  if (Object.hasOwn(choices, requested)) return requested as K;
  throw new ConsoleError('invalid_input', `${field} must be one of ${Object.keys(choices).join(', ')}`);
}

/** The route's `:id`, a bulk replay's id: digits only, at most 15 of them (a safe integer, within bigint). */
export function idParam(c: Context, name = 'id'): number {
  const text = c.req.param(name) ?? '';
  if (!/^[0-9]{1,15}$/.test(text)) {
    throw new ConsoleError(
      'invalid_input',
      `${name} must be a whole number such as 12, not "${text.slice(0, 30)}"`,
    );
  }
  return Number(text);
}
