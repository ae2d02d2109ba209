import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The `square` SDK names each webhook event's type only in a doc comment, so providers/types/square.ts pairs types
// with interfaces by hand: this reads the installed SDK's comments and holds the map to them, so an SDK upgrade
// that adds or renames an event fails here rather than leaving the map silently stale.
const sdk = join(dirname(createRequire(import.meta.url).resolve('square')), 'api/types');
const map = readFileSync(new URL('../src/types/square.ts', import.meta.url), 'utf8');
const paired = [...map.matchAll(/^ {2}'([a-z0-9_.]+)': wire\.(\w+)\.Raw;$/gm)].map(([, type, name]) => ({
  type: type!,
  name: name!,
}));

/** The type an event interface's doc comment names for its `type` field, if it names one. */
function documentedType(name: string): string | undefined {
  const text = readFileSync(join(sdk, `${name}.d.ts`), 'utf8');
  const comment = /\/\*\*([^*]|\*(?!\/))*\*\/\s*type\?: string/.exec(text)?.[0] ?? '';
  return /`"?([a-z0-9_]+(?:\.[a-z0-9_]+)+)"?\.?`/.exec(comment)?.[1];
}

describe('the Square payload map', () => {
  it('pairs each type with the interface whose comment names it, or whose name spells it', () => {
    expect(paired.length).toBeGreaterThan(140);
    for (const { type, name } of paired) {
      const spelled = name
        .replace(/Event$/, '')
        .replace(/([a-z])([A-Z])/g, '$1.$2')
        .toLowerCase();
      expect([documentedType(name), spelled], name).toContain(type);
    }
  });

  it('lists every webhook event interface the SDK documents a type for', () => {
    const mapped = new Set(paired.map(({ name }) => name));
    const documented = readdirSync(sdk)
      .filter((file) => file.endsWith('Event.d.ts'))
      .map((file) => file.slice(0, -'.d.ts'.length))
      .filter((name) => documentedType(name) !== undefined);
    expect(documented.filter((name) => !mapped.has(name))).toEqual([]);
  });
});
