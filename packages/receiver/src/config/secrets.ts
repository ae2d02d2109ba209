import { readFileSync } from 'node:fs';
import { CATALOGUE, type SourceDefinition } from '@webhook-inbox/providers';
import { blankToUndefined } from '@webhook-inbox/env';
import { z } from 'zod';

// The receiver's secret variables: how a list of secrets is read, the catalogue's `<TYPE>_WEBHOOK_SECRET`
// variables and the sources they declare, and `<NAME>_FILE` variables read into `<NAME>`.

// Secrets are split on commas and trimmed (a pasted trailing newline is not part of a secret); an empty entry
// is an error rather than a secret that silently never matches. Messages never include the value.
export const secretList = z.preprocess(
  blankToUndefined,
  z
    .string()
    .transform((value, ctx) => {
      const secrets = value.split(',').map((secret) => secret.trim());
      if (secrets.some((secret) => secret === '')) {
        ctx.addIssue({ code: 'custom', message: 'has an empty entry in its comma-separated list' });
        return z.NEVER;
      }
      return secrets;
    })
    .default([]),
);

const optionalText = z.preprocess(blankToUndefined, z.string().trim().optional());

/** The options a catalogue provider may require, each from `<TYPE>_WEBHOOK_<SUFFIX>`. */
const OPTION_VARIABLES = [
  ['url', 'URL'],
  ['verifyToken', 'VERIFY_TOKEN'],
] as const;

/**
 * One variable per catalogue provider, `<TYPE>_WEBHOOK_SECRET` (a comma-separated list during a rotation), declaring
 * a source named after its type; `<TYPE>_WEBHOOK_URL` for the providers that sign their public URL, and
 * `<TYPE>_WEBHOOK_VERIFY_TOKEN` for those that prove the endpoint with a dashboard verify token (Meta).
 */
export const catalogueSchema = z.object(
  Object.fromEntries(
    CATALOGUE.flatMap((entry) => [
      [entry.envVar, secretList],
      ...OPTION_VARIABLES.filter(([option]) => entry.facts.requiredOptions.includes(option)).map(
        ([, suffix]) => [optionVariable(entry.envVar, suffix), optionalText],
      ),
    ]),
  ) as Record<string, z.ZodType<string[] | string | undefined>>,
);

/** `SQUARE_WEBHOOK_SECRET` → `SQUARE_WEBHOOK_URL`; `META_WEBHOOK_SECRET` → `META_WEBHOOK_VERIFY_TOKEN`. */
function optionVariable(secretVariable: string, suffix: string): string {
  return secretVariable.replace(/_SECRET$/, `_${suffix}`);
}

/** The variables a secret may come from a file for (`<NAME>_FILE`: Kubernetes and Docker secrets). */
const SECRET_VARIABLES: readonly string[] = [
  'STRIPE_WEBHOOK_SECRET',
  'SHOPIFY_WEBHOOK_SECRET',
  'STANDARD_WEBHOOKS',
  'OIDC_CLIENT_SECRET',
  'CONSOLE_SESSION_SECRET',
  ...CATALOGUE.map((entry) => entry.envVar),
];

/** The sources the catalogue variables declare, each named after its type (`GITHUB_WEBHOOK_SECRET`: `github`). */
export function catalogueSources(values: Record<string, string[] | string | undefined>): SourceDefinition[] {
  return CATALOGUE.flatMap((entry) => {
    const secrets = values[entry.envVar];
    if (!Array.isArray(secrets) || secrets.length === 0) return [];
    const text = (suffix: string) => {
      const value = values[optionVariable(entry.envVar, suffix)];
      return typeof value === 'string' ? value : undefined;
    };
    return [
      {
        name: entry.type,
        type: entry.type,
        secrets,
        secretFiles: [],
        url: text('URL'),
        verifyToken: text('VERIFY_TOKEN'),
      },
    ];
  });
}

/** The catalogue entry of a source the catalogue variables declared. */
export function catalogueEntryOf(source: SourceDefinition) {
  const entry = CATALOGUE.find((candidate) => candidate.type === source.type);
  if (entry === undefined) throw new Error(`source "${source.name}" is not of a catalogue type`);
  return entry;
}

/**
 * The environment with each `<NAME>_FILE` read into `<NAME>` (its content trimmed: a file's trailing newline is
 * not part of a secret). Setting both is an error, as is a file that cannot be read; messages name the variable
 * and the path, never the content.
 */
export function withSecretFiles(
  env: Record<string, string | undefined>,
  issues: string[],
): Record<string, string | undefined> {
  const resolved = { ...env };
  for (const name of SECRET_VARIABLES) {
    const file = blankToUndefined(env[`${name}_FILE`]) as string | undefined;
    if (file === undefined) continue;
    if (blankToUndefined(env[name]) !== undefined) {
      issues.push(`${name} and ${name}_FILE are both set; keep one`);
      continue;
    }
    try {
      resolved[name] = readFileSync(file, 'utf8').trim();
    } catch (error) {
      issues.push(`${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return resolved;
}
