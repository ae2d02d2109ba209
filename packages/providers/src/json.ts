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
