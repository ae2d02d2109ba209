import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, catalogueEntry } from '../../src/catalogue/index.ts';
import { catalogueDelivery, catalogueSampleType, sampleCredentials } from '../../src/samples/index.ts';
import { hasSubject, subjectOf } from '../../src/subject.ts';
import { catalogueRowCells, rowCells } from '../../../../scripts/providers-table.ts';
import { request } from './support.ts';

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

  it('passes on the body it parsed while verifying, where the subject is read from it (types with subject paths)', () => {
    const url = 'https://hooks.example.com/webhooks/x';
    const entries = CATALOGUE.filter((entry) => hasSubject(entry.type));
    expect(entries.length).toBeGreaterThan(15);
    for (const entry of entries) {
      const credentials = sampleCredentials(entry);
      const type = catalogueSampleType(entry.type)!;
      const delivery = catalogueDelivery(entry.type, { ...credentials, type, url })!;
      const provider = entry.create({ secrets: [credentials.secret], url, verifyToken: 'verify-me' });
      const event = provider.verify(request(delivery.body, delivery.headers), new Date());
      const { body, ...unparsed } = event;
      expect(body, entry.type).toEqual(JSON.parse(event.payloadText));
      // The same subject as when the text is parsed again.
      expect(subjectOf(event), entry.type).toEqual(subjectOf(unparsed));
    }
  });
});

describe('docs/providers.md', () => {
  it('has a row for every catalogue provider that says what its facts say, cell by cell, and a section', async () => {
    const docs = await readFile(new URL('../../../../docs/providers.md', import.meta.url), 'utf8');
    const lines = docs.split('\n');
    for (const entry of CATALOGUE) {
      const row = lines.find((line) => line.startsWith(`| [${entry.type}](#${entry.type})`));
      expect(row, entry.type).toBeDefined();
      const cells = rowCells(row ?? '');
      expect(cells[2], `${entry.type}: the secret cell`).toMatch(new RegExp(`^\`${entry.envVar}\``));
      // Column by column, so a failure names the one that differs (`node scripts/providers-table.ts` rewrites them).
      const expected = catalogueRowCells(entry, cells[2] ?? '');
      expected.forEach((text, column) => expect(cells[column], `${entry.type}, column ${column}`).toBe(text));
      expect(docs).toContain(`\n## ${entry.type}\n`);
    }
  });
});
