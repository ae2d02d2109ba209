import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, catalogueEntry } from '../../src/catalogue/index.ts';
import { sampleCredentials } from '@webhook-inbox/testing';
import { catalogueRowCells, isRowOf, rowCells, tableLines } from '../../../../scripts/providers-table.ts';

describe('the catalogue table', () => {
  it('names each type once, with its <TYPE>_WEBHOOK_SECRET variable and complete facts', () => {
    const types = CATALOGUE.map((entry) => entry.type);
    expect(new Set(types).size).toBe(types.length);
    for (const entry of CATALOGUE) {
      expect(entry.type).toMatch(/^[a-z0-9-]+$/);
      expect(entry.envVar).toBe(`${entry.type.toUpperCase().replaceAll('-', '_')}_WEBHOOK_SECRET`);
      expect(entry.facts.docs).toMatch(/^https:\/\//);
      for (const fact of [
        entry.facts.scheme,
        entry.facts.eventKey,
        entry.facts.eventType,
        entry.facts.retries,
      ]) {
        expect(fact.length).toBeGreaterThan(10);
      }
    }
  });

  it('creates each provider under its type, or another source name, and refuses a missing URL at start-up', () => {
    for (const entry of CATALOGUE) {
      const { secret } = sampleCredentials(entry);
      const url = entry.facts.requiredOptions.includes('url')
        ? 'https://hooks.example.com/webhooks/x'
        : undefined;
      const verifyToken = entry.facts.requiredOptions.includes('verifyToken') ? 'verify-me' : undefined;
      expect(entry.create({ secrets: [secret], url, verifyToken }).name).toBe(entry.type);
      expect(entry.create({ name: `${entry.type}-eu`, secrets: [secret], url, verifyToken }).name).toBe(
        `${entry.type}-eu`,
      );
      if (url !== undefined)
        expect(() => entry.create({ secrets: [secret], verifyToken })).toThrow(TypeError);
      if (verifyToken !== undefined)
        expect(() => entry.create({ secrets: [secret], url })).toThrow(TypeError);
      expect(() => entry.create({ secrets: [] })).toThrow(TypeError);
    }
    expect(catalogueEntry('github')?.type).toBe('github');
    expect(catalogueEntry('stripe')).toBeUndefined();
  });
});

describe('docs/providers.md', () => {
  it('has a row for every catalogue provider that says what its facts say, cell by cell, linked to its section where it has one', async () => {
    const docs = await readFile(new URL('../../../../docs/providers.md', import.meta.url), 'utf8');
    const { lines, from, to } = tableLines(docs);
    for (const entry of CATALOGUE) {
      const row = lines.slice(from, to).find((line) => isRowOf(line, entry.type));
      expect(row, `${entry.type}: no row (node scripts/providers-table.ts writes it)`).toBeDefined();
      const cells = rowCells(row ?? '');
      expect(cells[2], `${entry.type}: the secret cell`).toMatch(new RegExp(`^\`${entry.envVar}\``));
      // Column by column, so a failure names the one that differs (`node scripts/providers-table.ts` rewrites them).
      const expected = catalogueRowCells(entry, cells[2] ?? '', docs);
      expected.forEach((text, column) => expect(cells[column], `${entry.type}, column ${column}`).toBe(text));
    }
  });
});
