/**
 * `node scripts/providers-table.ts`: writes the catalogue's rows of the table in docs/providers.md from the
 * providers' facts (`catalogue/providers/<type>.ts`), so the table says what the code does; a new provider gets its
 * row here, after the last catalogue row. Every cell but the secret's comes
 * from the facts; the secret's cell, which names the variable and what the secret is, is kept as written, and a
 * new provider's row gets its `<TYPE>_WEBHOOK_SECRET`. Run `pnpm exec prettier --write docs/providers.md` after it.
 * packages/providers/test/catalogue/index.test.ts checks the table cell by cell against the same rendering.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CATALOGUE, type CatalogueEntry } from '@webhook-inbox/providers';

const DOCS = fileURLToPath(new URL('../docs/providers.md', import.meta.url));

/** A table cell's text: a `|` inside it is escaped. */
const cell = (text: string) => text.replaceAll('|', '\\|');

/**
 * The table's cells of a catalogue provider, in column order; `secret` is the secret's cell as written. Its name
 * links to its section where the docs have one (`## <type>`): what the row cannot say in a cell.
 */
export function catalogueRowCells(entry: CatalogueEntry, secret: string, docs: string): string[] {
  const { facts } = entry;
  return [
    docs.includes(`\n## ${entry.type}\n`) ? `[${entry.type}](#${entry.type})` : entry.type,
    cell(facts.scheme),
    secret,
    cell(facts.eventKey),
    cell(facts.eventType),
    facts.toleranceSeconds === undefined ? 'none signed' : `${facts.toleranceSeconds} s`,
    cell(facts.retries),
    cell(facts.quirks),
    `[docs](${facts.docs})`,
  ];
}

/** A markdown table row's cells, trimmed (an escaped `\|` stays inside its cell). */
export function rowCells(line: string): string[] {
  return line
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((text) => text.trim());
}

/** The default secret cell of a provider with no row yet. */
function newSecretCell(entry: CatalogueEntry): string {
  const options = entry.facts.requiredOptions.map((option) => `, option \`${option}\``).join('');
  return `\`${entry.envVar}\`${options}`;
}

/** Whether `line` is the table row of catalogue type `type`, its name linked or not. */
export function isRowOf(line: string, type: string): boolean {
  return line.startsWith(`| [${type}](#${type}) `) || line.startsWith(`| ${type} `);
}

/** The lines of the docs' table, `## The table` to the next heading: where the catalogue's rows are. */
export function tableLines(docs: string): { lines: string[]; from: number; to: number } {
  const lines = docs.split('\n');
  const from = lines.indexOf('## The table');
  if (from === -1) throw new Error('docs/providers.md has no "## The table" section');
  const next = lines.findIndex((line, at) => at > from && line.startsWith('## '));
  return { lines, from, to: next === -1 ? lines.length : next };
}

function main(): void {
  const docs = readFileSync(DOCS, 'utf8');
  const table = tableLines(docs);
  const { lines, from } = table;
  let { to } = table;
  const rowOf = (type: string) => {
    const at = lines.slice(from, to).findIndex((line) => isRowOf(line, type));
    return at === -1 ? -1 : from + at;
  };
  // A new row goes after the row of the provider before it in type order, or first, under the header's rule.
  let last = lines.findIndex((line, at) => at > from && line.startsWith('| ---'));
  for (const entry of CATALOGUE) {
    const at = rowOf(entry.type);
    const secret = at === -1 ? newSecretCell(entry) : (rowCells(lines[at] ?? '')[2] ?? newSecretCell(entry));
    const row = `| ${catalogueRowCells(entry, secret, docs).join(' | ')} |`;
    if (at === -1) {
      lines.splice(++last, 0, row);
      to++;
    } else {
      lines[at] = row;
      last = Math.max(last, at);
    }
  }
  writeFileSync(DOCS, lines.join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
