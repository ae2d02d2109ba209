/** One printed table: a benchmark's figures next to the same-run baselines they are compared with. */
export interface BenchTable {
  title: string;
  columns: string[];
  rows: Array<Record<string, string | number>>;
  /** Lines printed under the table (setup, caveats). */
  notes?: string[];
}

export function formatTable(table: BenchTable): string {
  const cells = table.rows.map((row) => table.columns.map((column) => String(row[column] ?? '')));
  const widths = table.columns.map((column, i) =>
    Math.max(column.length, ...cells.map((row) => row[i]!.length)),
  );
  const line = (values: string[]) =>
    `| ${values.map((value, i) => (i === 0 ? value.padEnd(widths[i]!) : value.padStart(widths[i]!))).join(' | ')} |`;
  return [
    `## ${table.title}`,
    '',
    line(table.columns),
    `|${widths.map((width, i) => (i === 0 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`,
    ...cells.map(line),
    ...(table.notes?.length ? ['', ...table.notes.map((note) => `- ${note}`)] : []),
    '',
  ].join('\n');
}

export const fixed = (value: number, digits = 1): string =>
  Number.isFinite(value) ? value.toFixed(digits) : '-';
