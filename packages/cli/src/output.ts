/** Prints rows as an aligned text table (humans) or as JSON (scripts, `--json`). */
export function printRows(rows: Record<string, unknown>[], json: boolean, columns?: string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(rows, replacer, 2)}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const keys = columns ?? Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => keys.map((key) => format(row[key])));
  const widths = keys.map((key, i) => Math.max(key.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(keys), ...cells.map(line)].join('\n')}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, replacer, 2)}\n`);
}

function format(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return value.toString();
  return JSON.stringify(value, replacer);
}

// bigint ids (Shopify) print as their exact digits.
function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
