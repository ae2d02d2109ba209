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

/** A value of the subject, where it is read from, and whether it is stored lower-cased. */
export interface SubjectSource<Where> {
  where: Where;
  caseless: boolean;
}

/** Each entry of `caseless.subject` named among the type's subject pointers and headers, or a TypeError at load. */
function caselessOf(paths: PayloadPaths, type: string): ReadonlySet<string> {
  const caseless = new Set(paths.caseless?.subject ?? []);
  const known = new Set([...(paths.subject ?? []), ...(paths.subjectHeaders ?? [])]);
  for (const entry of caseless) {
    if (!known.has(entry))
      throw new TypeError(`${type}: caseless subject ${entry} is not one of its subject's`);
  }
  return caseless;
}

/** The subject's pointers of each provider that has a subject, by type, each with its case rule. */
export const SUBJECT_READS: Readonly<Record<string, readonly SubjectSource<Pointer>[]>> = table(
  'subject',
  (pointers, type) => {
    const caseless = caselessOf(pathsOf(type), type);
    const tokens = parsed(pointers, type);
    return pointers.map((pointer, index) => ({ where: tokens[index]!, caseless: caseless.has(pointer) }));
  },
);

/** The kept headers (lower-case) whose values are subject values, by type, each with its case rule. */
export const SUBJECT_HEADERS: Readonly<Record<string, readonly SubjectSource<string>[]>> = table(
  'subjectHeaders',
  (headers, type) => {
    const caseless = caselessOf(pathsOf(type), type);
    return headers.map((header) => ({ where: header, caseless: caseless.has(header) }));
  },
);

/** The types whose event keys compare without case (`caseless.eventId`): the event-id search ignores case for them. */
export const CASELESS_EVENT_ID_TYPES: readonly string[] = BY_TYPE.filter(
  ([, paths]) => paths.caseless?.eventId === true,
).map(([type]) => type);

/**
 * The provider names whose event ids compare without case, for the id search (`EventFilter.caselessIdProviders`):
 * each caseless type under its own name, and each source of such a type under the name it is received as (a
 * `github-acme` source of type `github`).
 */
export function caselessIdProviders(sources: ReadonlyArray<{ name: string; type: string }>): string[] {
  const named = sources.filter(({ type }) => CASELESS_EVENT_ID_TYPES.includes(type)).map(({ name }) => name);
  return [...new Set([...CASELESS_EVENT_ID_TYPES, ...named])];
}

function pathsOf(type: string): PayloadPaths {
  return BY_TYPE.find(([candidate]) => candidate === type)?.[1] ?? {};
}
