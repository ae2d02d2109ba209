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
