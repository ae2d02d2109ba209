/** A SQL statement and its `$n` values, as every statement module here returns them. */
export interface Statement {
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
