import { describe, expect, it } from 'vitest';
import { DEFINITIONS } from '../src/catalogue/index.ts';
import { pointerTokens } from '../src/pointer.ts';
import { EVENT_FACTS, EXCERPT_POINTERS, SUBJECT_POINTERS } from '../src/provider-paths.ts';
import { SHOPIFY_PATHS } from '../src/shopify.ts';
import { STRIPE_PATHS } from '../src/stripe.ts';

const OWN = { stripe: STRIPE_PATHS, shopify: SHOPIFY_PATHS };
const declared = [
  ...Object.entries(OWN),
  ...DEFINITIONS.map((definition) => [definition.type, definition] as const),
];

describe('the paths into payloads, keyed by provider type', () => {
  it('are each provider object’s own, parsed: no type without a declaration, no declaration left out', () => {
    for (const [type, paths] of declared) {
      expect(SUBJECT_POINTERS[type], `${type} subject`).toEqual(paths.subject?.map(pointerTokens));
      expect(EXCERPT_POINTERS[type], `${type} excerpt`).toEqual(paths.excerpt?.map(pointerTokens));
      expect(EVENT_FACTS[type], `${type} facts`).toEqual(
        paths.eventFacts?.map((fact) => ({ ...fact, paths: (fact.paths ?? []).map(pointerTokens) })),
      );
    }
    const types = declared.map(([type]) => type);
    for (const table of [SUBJECT_POINTERS, EXCERPT_POINTERS, EVENT_FACTS]) {
      expect(Object.keys(table).filter((type) => !types.includes(type))).toEqual([]);
    }
  });

  it('give every catalogue type with facts an excerpt (an alert shows its account), and every fact a path or a header', () => {
    for (const definition of DEFINITIONS) {
      if (definition.eventFacts) expect(definition.excerpt, definition.type).toBeDefined();
      for (const fact of definition.eventFacts ?? []) {
        expect((fact.paths?.length ?? 0) > 0 || fact.header !== undefined, fact.label).toBe(true);
      }
    }
  });
});
