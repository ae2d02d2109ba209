import { InvalidPayloadError } from './errors.ts';
import { rawJson, rawJsonText } from './json.ts';
import { bodyText } from './shared.ts';

// How a template source reads a verified body: JSON (any value, numbers kept digit for digit) or an
// `application/x-www-form-urlencoded` form (pointer.ts reads into what was read).

/** What `JSON.parse`'s reviver is given as its third argument in Node >= 22 (the source text of a primitive). */
interface ReviverContext {
  source?: string;
}

/**
 * JSON whose numbers are kept as their source text (`JSON.rawJSON`): a batch item re-serialized with
 * `JSON.stringify` has exactly the digits it was sent with, even past 2^53.
 */
export function parseJsonLossless(source: string, text: string, what = 'the body'): unknown {
  try {
    return JSON.parse(text, (_key, value: unknown, context?: ReviverContext) =>
      typeof value === 'number' && context?.source !== undefined ? rawJson(context.source) : value,
    );
  } catch (error) {
    throw new InvalidPayloadError(`${source}: ${what} is not valid JSON`, { cause: error });
  }
}

/** A verified body as a template reads it: `value` is what pointers look into, `payloadText` what is stored. */
export interface DecodedBody {
  value: unknown;
  payloadText: string;
  /**
   * A JSON body parsed by `JSON.parse` (numbers as JS numbers), made on the first call: what one event's key and
   * type are read from first and what the event carries as its `body`; `undefined` for a form.
   */
  plain?: () => unknown;
}

/**
 * A JSON body, stored as received. Its lossless parse (`value`, numbers kept digit for digit) costs about six
 * plain ones, so it is made on first use only: by a batch, a handshake, or a key or type that is a number.
 */
export function decodeJson(source: string, rawBody: Uint8Array): DecodedBody {
  if (rawBody.length === 0) throw new InvalidPayloadError(`${source}: the body is empty; expected JSON`);
  const text = bodyText(source, rawBody);
  let lossless: { value: unknown } | undefined;
  let plain: { value: unknown } | undefined;
  return {
    payloadText: text,
    get value() {
      return (lossless ??= { value: parseJsonLossless(source, text) }).value;
    },
    plain: () => (plain ??= { value: parsePlain(source, text) }).value,
  };
}

function parsePlain(source: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidPayloadError(`${source}: the body is not valid JSON`, { cause: error });
  }
}

/** A form body's fields in order, names and values percent-decoded (`+` is a space), as a sender signs them. */
export function formPairs(text: string): Array<[string, string]> {
  return [...new URLSearchParams(text)];
}

/**
 * A form body: its fields as an object (a repeated name becomes an array of its values; the names in
 * `jsonFields`, such as Slack's `payload`, parsed as JSON), stored as `{"form": <fields>, "raw": "<body>"}` so the
 * exact bytes the signature covered stay recorded beside what effects read.
 */
export function decodeForm(
  source: string,
  rawBody: Uint8Array,
  jsonFields: readonly string[] = [],
): DecodedBody {
  const text = bodyText(source, rawBody);
  const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of formPairs(text)) {
    const parsed = jsonFields.includes(name)
      ? parseJsonLossless(source, value, `the form field "${name}"`)
      : value;
    const known = fields[name];
    if (known === undefined) fields[name] = parsed;
    else fields[name] = Array.isArray(known) ? [...(known as unknown[]), parsed] : [known, parsed];
  }
  return { value: fields, payloadText: JSON.stringify({ form: fields, raw: text }) };
}

/** A JSON value as stored text (numbers read by `parseJsonLossless` keep their digits). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value);
}

/** A key or type read from a body: a non-empty string, or a number as it was written; else `undefined`. */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  return rawJsonText(value);
}
