import type { Pointer } from '@webhook-inbox/providers/paths';

// The shape of an alert excerpt's allow-list: written as JSON pointers (excerpt-fields.ts), walked as a tree
// (excerpt.ts).

/**
 * The fields an excerpt may show. `true`: the field's value when it is a scalar (string, number, boolean, null;
 * an object in its place is left out). An object: the named fields of the object found there, or of each of the
 * first items of an array.
 */
export interface Fields {
  readonly [name: string]: true | Fields;
}

/**
 * The tree of a list of parsed JSON pointers, in the list's order. A `*` token marks an array, whose first items
 * the excerpt shows each read by the rest of the pointer; the tree reads an array wherever one stands, so `*`
 * adds no level. Throws when one pointer leads through another's field (`/a` and `/a/b`).
 *
 * @example
 * fieldsOf([['id'], ['entry', '*', 'id']]) // { id: true, entry: { id: true } }
 */
export function fieldsOf(pointers: readonly Pointer[]): Fields {
  const root: Record<string, true | Fields> = {};
  for (const pointer of pointers) {
    const names = pointer.filter((token) => token !== '*');
    let node = root;
    names.forEach((name, index) => {
      const last = index === names.length - 1;
      const known = node[name];
      if (last ? known !== undefined : known === true) {
        throw new TypeError(`excerpt field /${pointer.join('/')} overlaps another field`);
      }
      if (last) node[name] = true;
      else node = (node[name] ??= {}) as Record<string, true | Fields>;
    });
  }
  return root;
}
