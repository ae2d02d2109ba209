// The shape of an alert excerpt's allow-list, shared by the excerpts (excerpt.ts) and the catalogue's entries
// (catalogue-excerpts.ts).

/**
 * The fields an excerpt may show. `true`: the field's value when it is a scalar (string, number, boolean, null;
 * an object in its place is left out). An object: the named fields of the object found there, or of each of the
 * first items of an array.
 */
export interface Fields {
  readonly [name: string]: true | Fields;
}
