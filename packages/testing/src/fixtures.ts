import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's `test/fixtures/`: provider deliveries as the providers send them, read at run time. */
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));

/** A project fixture, as text (the exact bytes: Shopify ids above 2^53 must not pass through JSON.parse). */
export function fixtureText(path: string): string {
  return readFileSync(`${FIXTURES}${path}`, 'utf8');
}

/** A project fixture, parsed. */
export function fixture<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(fixtureText(path)) as T;
}
