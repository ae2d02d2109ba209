import { rawJsonText } from './json.ts';

// JSON pointers (RFC 6901), the one notation for a path into a payload: the templates' keys and types, and each
// provider's event facts, subject values and alert excerpt fields. `/repository/full_name`; `~1` is a `/` in a
// key, `~0` a `~`; a digit token reads one element of an array (`/entry/0/id`). Arrays have one rule beyond the
// RFC, for the readers of every value (`valuesAt`): a `*` token reads each element of the array there
// (`/data/to/*`, `/data/email_addresses/*/email_address`). `readPointer` reads one value, exactly as RFC 6901 says.
// Pointers are parsed once, where they are declared, and read many times.

/** A parsed pointer: its reference tokens, unescaped. */
export type Pointer = readonly string[];

/** An RFC 6901 pointer's reference tokens, or a `TypeError` naming what is wrong with it. */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new TypeError(`JSON pointer ${JSON.stringify(pointer)} must be empty or start with "/"`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~[^01]|~$/.test(token)) {
        throw new TypeError(`JSON pointer ${JSON.stringify(pointer)} has a "~" not followed by 0 or 1`);
      }
      return token.replaceAll('~1', '/').replaceAll('~0', '~');
    });
}

/** The child a token names: an own key of an object, a canonical index of an array; else `undefined`. */
function child(value: unknown, token: string): unknown {
  if (Array.isArray(value)) {
    return /^(?:0|[1-9][0-9]*)$/.test(token) ? (value as unknown[])[Number(token)] : undefined;
  }
  if (typeof value === 'object' && value !== null && rawJsonText(value) === undefined) {
    return Object.hasOwn(value, token) ? (value as Record<string, unknown>)[token] : undefined;
  }
  return undefined;
}

/** The value `tokens` point at, or `undefined` when there is none. */
export function readPointer(value: unknown, tokens: Pointer): unknown {
  let current = value;
  for (const token of tokens) {
    current = child(current, token);
    if (current === undefined) return undefined;
  }
  return current;
}

/**
 * Every value `tokens` point at, in document order: a `*` token reads each element of an array (nothing where no
 * array is), any other token as `readPointer` does. `[]` when there is none.
 *
 * @example
 * valuesAt({ to: ['a@x.io', 'b@x.io'] }, pointerTokens('/to/*')) // ['a@x.io', 'b@x.io']
 */
export function valuesAt(value: unknown, tokens: Pointer, from = 0): unknown[] {
  if (value === undefined) return [];
  if (from === tokens.length) return [value];
  const token = tokens[from] ?? '';
  if (token === '*') {
    return Array.isArray(value) ? value.flatMap((item: unknown) => valuesAt(item, tokens, from + 1)) : [];
  }
  return valuesAt(child(value, token), tokens, from + 1);
}
