import { sql } from 'drizzle-orm';

/** A status vocabulary as the SQL list of a table's check constraint: `'a', 'b', 'c'`. */
export const inList = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));
