import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml, YAMLError } from 'yaml';
import type { z } from 'zod';
import { sourcesFileSpec, type SourceDefinition } from './sources.ts';

/** A sources file that cannot be used: one line per problem, each naming the source and the field. */
export class SourcesFileError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`invalid sources file:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    this.name = 'SourcesFileError';
    this.issues = issues;
  }
}

/** `source "github": hmac.header: must be an HTTP header name`, from a zod issue of the file. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const [top, name, ...field] = issue.path.map(String);
  if (top !== 'sources' || name === undefined) {
    return `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`;
  }
  if (issue.code === 'invalid_key') return `source name ${JSON.stringify(name)}: ${issue.message}`;
  return `source "${name}": ${field.length > 0 ? `${field.join('.')}: ` : ''}${issue.message}`;
}

/**
 * Where a parse failed and why, without the file's text: the YAML parser's message quotes the offending line and
 * V8's JSON one a slice of the input, either of which may hold a secret. Kept: the position and the reason without
 * the text it quotes (`safeReason`).
 */
function parseFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const firstLine = message.split('\n', 1)[0] ?? '';
  if (error instanceof YAMLError) {
    const [start] = error.linePos ?? [];
    const reason = firstLine.replace(/ at line \d+, column \d+:?$/, '');
    const where = start === undefined ? '' : `line ${start.line}, column ${start.col}: `;
    return `${where}${safeReason(reason)} (${error.code})`;
  }
  const position = /at position \d+(?: \(line \d+ column \d+\))?/.exec(firstLine)?.[0];
  const reason = safeReason(firstLine.replace(/ in JSON at position .*$/, ''));
  return position === undefined ? reason : `${reason} ${position}`;
}

/**
 * A parser's reason, cut before the first `"` and the first word ending in a colon ("extra characters: <text>";
 * "Missing , or : between" has none), and at 100 characters.
 */
function safeReason(reason: string): string {
  return reason
    .split(/"|(?<=\S): /, 1)[0]!
    .replace(/[\s,]+$/, '')
    .slice(0, 100);
}

/** The file's text as data: JSON for `.json`, YAML (a superset of JSON) otherwise. */
function parseText(path: string, text: string): unknown {
  try {
    return path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new SourcesFileError([
      `${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${parseFailure(error)}`,
    ]);
  }
}

/**
 * The sources declared in `text` (the file at `path`), validated, each source's `secretFiles` read (relative to
 * the file) and appended to its `secrets`. Throws `SourcesFileError` listing every problem, each naming the
 * source and the field, never a secret's value.
 *
 * @example
 * const sources = parseSourcesFile('sources.yaml', readFileSync('sources.yaml', 'utf8'));
 */
export function parseSourcesFile(
  path: string,
  text: string,
  readSecret: (file: string) => string = (file) => readFileSync(file, 'utf8'),
): SourceDefinition[] {
  const parsed = sourcesFileSpec.safeParse(parseText(path, text));
  if (!parsed.success) throw new SourcesFileError(parsed.error.issues.map(describeIssue));
  const issues: string[] = [];
  const sources: SourceDefinition[] = [];
  for (const [name, source] of Object.entries(parsed.data.sources)) {
    const secrets = [...source.secrets];
    source.secretFiles.forEach((file, index) => {
      const full = resolve(dirname(path), file);
      try {
        const secret = readSecret(full).trim();
        if (secret === '') issues.push(`source "${name}": secretFiles.${index}: ${full} is empty`);
        else secrets.push(secret);
      } catch (error) {
        issues.push(
          `source "${name}": secretFiles.${index}: cannot read ${full} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
    });
    if (secrets.length === 0 && source.secretFiles.length === 0) {
      issues.push(`source "${name}": secrets: at least one secret is required (secrets or secretFiles)`);
    }
    sources.push({ ...source, name, secrets });
  }
  if (issues.length > 0) throw new SourcesFileError(issues);
  return sources;
}

/** `parseSourcesFile` of the file at `path`; an unreadable file is a `SourcesFileError` too. */
export function loadSourcesFile(path: string): SourceDefinition[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SourcesFileError([`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  return parseSourcesFile(path, text);
}
