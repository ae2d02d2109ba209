/**
 * `node scripts/providers-table.ts`: writes the catalogue's rows of the table in docs/providers.md from the
 * providers' facts (`catalogue/<type>.ts`), so the table says what the code does. Every cell but the secret's comes
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

/** The table's cells of a catalogue provider, in column order; `secret` is the secret's cell as written. */
export function catalogueRowCells(entry: CatalogueEntry, secret: string): string[] {
  const { facts } = entry;
  return [
    `[${entry.type}](#${entry.type})`,
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

function main(): void {
  const lines = readFileSync(DOCS, 'utf8').split('\n');
  const rowOf = (type: string) => lines.findIndex((line) => line.startsWith(`| [${type}](#${type})`));
  let last = -1;
  for (const entry of CATALOGUE) {
    const at = rowOf(entry.type);
    const secret = at === -1 ? newSecretCell(entry) : (rowCells(lines[at] ?? '')[2] ?? newSecretCell(entry));
    const row = `| ${catalogueRowCells(entry, secret).join(' | ')} |`;
    if (at === -1) lines.splice(last + 1, 0, row);
    else lines[at] = row;
    last = at === -1 ? last + 1 : Math.max(last, at);
  }
  writeFileSync(DOCS, lines.join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
