/**
 * `JSON.parse` that keeps every digit: integers beyond Number.MAX_SAFE_INTEGER become `bigint` (from the
 * source digits, never through a double). Shopify order, customer and line-item ids exceed 2^53.
 */
export function parseJsonLossless(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (
      typeof value === 'number' &&
      !Number.isSafeInteger(value) &&
      context?.source &&
      /^-?\d+$/.test(context.source)
    ) {
      return BigInt(context.source);
    }
    return value;
  });
}

/** `JSON.rawJSON` and `JSON.isRawJSON` (Node 22, ES2025), which TypeScript's ES2023 library does not declare. */
interface RawJson {
  rawJSON: string;
}
const json = JSON as unknown as {
  rawJSON(text: string): RawJson;
  isRawJSON(value: unknown): value is RawJson;
};

/** A JSON number kept as its source text: `JSON.stringify` writes exactly those digits. */
export function rawJson(source: string): unknown {
  return json.rawJSON(source);
}

/** The source text of a value `rawJson` made; undefined for any other value. */
export function rawJsonText(value: unknown): string | undefined {
  return json.isRawJSON(value) ? value.rawJSON : undefined;
}
