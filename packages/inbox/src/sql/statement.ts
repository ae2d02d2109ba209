/**
 * One SQL statement as text + `$n` values, ready for `client.query(statement)` (pg takes the object as is).
 * Every statement module of the inbox returns these, so a statement can be read, and tested, apart from the code
 * that sends it.
 */
export interface Statement {
  /** Set on fixed statements: prepared once per connection instead of parsed and planned each time. */
  name?: string;
  text: string;
  values: unknown[];
}

/** Collects values and hands back their `$n` placeholders, for statements whose WHERE depends on a filter. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    return `$${this.values.push(value)}`;
  }
}
