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
