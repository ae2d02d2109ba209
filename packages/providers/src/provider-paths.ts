import type { EventFact, PayloadPaths } from './catalogue/facts.ts';
import { DEFINITIONS } from './catalogue/index.ts';
import { pointerTokens, type Pointer } from './pointer.ts';
import { SHOPIFY_PATHS } from './shopify.ts';
import { STRIPE_PATHS } from './stripe.ts';

export type { Pointer } from './pointer.ts';

// Every provider's paths into its payloads, keyed by provider type and parsed once, at load: each catalogue
// module's definition, Stripe's and Shopify's beside their code. The event page (event-facts.ts), the subjects
// (subject.ts) and the operator's alert excerpts read these tables; no path is written anywhere else.

/** An event fact with its pointers parsed. */
export interface ParsedEventFact extends Omit<EventFact, 'paths'> {
  paths: readonly Pointer[];
}

const BY_TYPE: ReadonlyArray<readonly [string, PayloadPaths]> = [
  ['stripe', STRIPE_PATHS],
  ['shopify', SHOPIFY_PATHS],
  ...DEFINITIONS.map((definition) => [definition.type, definition] as const),
];

/** The types that declare `field`, each with its value made by `parse`. */
function table<K extends keyof PayloadPaths, T>(
  field: K,
  parse: (paths: NonNullable<PayloadPaths[K]>, type: string) => T,
): Readonly<Record<string, T>> {
  const entries: Array<[string, T]> = [];
  for (const [type, paths] of BY_TYPE) {
    const value = paths[field];
    if (value !== undefined) entries.push([type, parse(value, type)]);
  }
  return Object.fromEntries(entries);
}

/** Parsed pointers; a bad one fails at load, naming its provider. */
function parsed(pointers: readonly string[], type: string): readonly Pointer[] {
  return pointers.map((pointer) => {
    try {
      return pointerTokens(pointer);
    } catch (error) {
      throw new TypeError(`${type}: ${(error as Error).message}`, { cause: error });
    }
  });
}

/** The facts of each provider that names where its events come from, by type, in the order shown. */
export const EVENT_FACTS: Readonly<Record<string, readonly ParsedEventFact[]>> = table(
  'eventFacts',
  (facts, type) => facts.map((fact) => ({ ...fact, paths: parsed(fact.paths ?? [], type) })),
);

/** The subject's pointers of each provider that has a subject, by type. */
export const SUBJECT_POINTERS: Readonly<Record<string, readonly Pointer[]>> = table('subject', parsed);

/** The pointers an alert excerpt of a catalogue provider's event may show, by type. */
export const EXCERPT_POINTERS: Readonly<Record<string, readonly Pointer[]>> = table('excerpt', parsed);
