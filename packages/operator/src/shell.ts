/**
 * A word for a POSIX shell command line an operator copies (an alert's replay hint, the CLI's dry run): as is when
 * it holds nothing a shell reads specially, else single-quoted.
 *
 * @example
 * shellArg("crm refused contact <id>") // "'crm refused contact <id>'"
 */
export function shellArg(value: string): string {
  return /^[A-Za-z0-9_.:/@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
