import { z } from 'zod';
import type { CertificateFetch } from './catalogue/certificates.ts';
import { CATALOGUE, catalogueEntry, type CatalogueEntry } from './catalogue/index.ts';
import { PROVIDER_NAME } from './standard-webhooks.ts';
import {
  BUILTIN_TYPES,
  builtinSources,
  createBuiltinProvider,
  secretFields,
  tolerance,
  type BuiltinSource,
} from './template-sources.ts';
import type { Provider } from './types.ts';

// The sources file's schema (`WEBHOOK_SOURCES_FILE`, read by sources-file.ts) and how a declared source becomes a
// `Provider`. A source is a named endpoint, `/webhooks/<name>`: its name is also its dedupe namespace (the
// `provider` column of webhook_events), so two sources of one type never share keys.

/**
 * A source of a catalogue provider's type (`type: github`): its secrets, a tolerance overriding the provider's own,
 * and the options the provider requires besides (`url` for the providers that sign their public URL).
 */
function catalogueSource(entry: CatalogueEntry) {
  const needsUrl = entry.facts.requiredOptions.includes('url');
  return z
    .object({
      type: z.literal(entry.type),
      ...secretFields,
      ...tolerance,
      url: z
        .url({ protocol: /^https?$/, error: 'must be the absolute http(s) URL the provider sends to' })
        .optional(),
      verifyToken: z.string().min(1).optional(),
    })
    .strict()
    .superRefine((source, ctx) => {
      const needsToken = entry.facts.requiredOptions.includes('verifyToken');
      if (needsToken !== (source.verifyToken !== undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['verifyToken'],
          message: needsToken
            ? `is required: ${entry.type} proves the endpoint with the verify token typed into its dashboard`
            : `is not an option of ${entry.type}`,
        });
      }
      if (needsUrl && source.url === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: `is required: ${entry.type} signs the URL it sends to`,
        });
      }
      if (!needsUrl && source.url !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: `is not an option of ${entry.type} (it does not sign its URL)`,
        });
      }
    });
}

export const SOURCE_TYPES: readonly string[] = [...BUILTIN_TYPES, ...CATALOGUE.map((entry) => entry.type)];

/** A source of a catalogue type, as the file declares it. */
export interface CatalogueSource {
  type: string;
  secrets: string[];
  secretFiles: string[];
  toleranceSeconds?: number | undefined;
  url?: string | undefined;
  verifyToken?: string | undefined;
}

export const sourceSpec: z.ZodType<BuiltinSource | CatalogueSource> = z.discriminatedUnion(
  'type',
  [...builtinSources, ...CATALOGUE.map(catalogueSource)],
  { error: `type must be one of ${SOURCE_TYPES.join(', ')}` },
);

/** The whole file: `sources:` mapping each name to its source. */
export const sourcesFileSpec = z
  .object({
    sources: z.record(
      z.string().regex(PROVIDER_NAME, { error: 'a source name is lower-case letters, digits and "-"' }),
      sourceSpec,
    ),
  })
  .strict();

/** A declared source, its secret files read: what `createSourceProvider` builds. */
export type SourceDefinition = (BuiltinSource | CatalogueSource) & { name: string };

/** Whether the source is of a type this module builds itself rather than one of the catalogue's. */
export function isBuiltinSource(source: SourceDefinition): source is BuiltinSource & { name: string } {
  return (BUILTIN_TYPES as readonly string[]).includes(source.type);
}

/**
 * The provider of one declared source. Throws (a `TypeError` naming the source and the secret by position) when a
 * secret is malformed for its type, so a wrong file fails at start-up.
 */
export function createSourceProvider(
  source: SourceDefinition,
  defaultToleranceSeconds: number,
  certificateFetch?: CertificateFetch,
): Provider {
  if (!isBuiltinSource(source)) return createCatalogueProvider(source, certificateFetch);
  return createBuiltinProvider(source, defaultToleranceSeconds);
}

/** A catalogue type's provider; its tolerance, unless the source sets one, is the provider's documented one. */
function createCatalogueProvider(
  source: CatalogueSource & { name: string },
  certificateFetch: CertificateFetch | undefined,
): Provider {
  const entry = catalogueEntry(source.type);
  if (entry === undefined) throw new TypeError(`unknown source type ${JSON.stringify(source.type)}`);
  const { name, secrets, toleranceSeconds, url, verifyToken } = source;
  return entry.create({ name, secrets, toleranceSeconds, url, verifyToken, certificateFetch });
}
