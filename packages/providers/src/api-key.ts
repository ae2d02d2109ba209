import { z } from 'zod';
import { InvalidSignatureError, MissingSignatureError } from './errors.ts';
import { assertPresentedSecrets, credentialDigest, headerValue, matchesCredential } from './shared.ts';
import { CREDENTIAL } from './template-rules.ts';
import { headerName, type TemplateSpec } from './template-schema.ts';
import { templateProvider } from './template-spec.ts';
import type { Provider, SignedRequest } from './types.ts';

export const apiKeySpec = z
  .object({
    /** The header carrying the key, e.g. `X-Api-Key` or `Authorization`. */
    header: headerName.optional(),
    /** The query parameter carrying the key, e.g. `key` in `/webhooks/graph?key=...`. */
    query: z.string().min(1).optional(),
    /** Before the key in the header, e.g. `Bearer `. */
    prefix: z.string().default(''),
  })
  .strict()
  .refine((spec) => (spec.header === undefined) !== (spec.query === undefined), {
    error: 'must have exactly one of header or query',
  });
export type ApiKeySpec = z.output<typeof apiKeySpec>;

export interface ApiKeyProviderOptions {
  name: string;
  /** The keys; more than one during a rotation. */
  secrets: readonly string[];
  apiKey: ApiKeySpec;
  template: TemplateSpec;
}

function presentedKey(spec: ApiKeySpec, request: SignedRequest): string | undefined {
  if (spec.header !== undefined) return headerValue(request.header(spec.header));
  const url = request.url ?? '';
  const at = url.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : url.slice(at + 1)).get(spec.query ?? '') ?? undefined;
}

/**
 * A sender that authenticates with a shared key in a header or a query parameter (Microsoft Graph's notification
 * URL, many SaaS "custom header" webhooks), compared in constant time with every configured key. The body is not
 * signed, so this proves only who sent it (over TLS). A key has at least `MIN_PRESENTED_SECRET_LENGTH` characters,
 * and the receiver bounds wrong guesses per client (`guessable`). The event key and type are the template's.
 *
 * @example
 * const graph = apiKeyProvider({ name: 'graph', secrets: [key], apiKey: { query: 'key', prefix: '' }, template });
 */
export function apiKeyProvider(options: ApiKeyProviderOptions): Provider {
  const { name, apiKey } = options;
  assertPresentedSecrets(name, options.secrets, 'key');
  const digests = options.secrets.map((secret) => credentialDigest(`${apiKey.prefix}${secret}`));
  const where =
    apiKey.header !== undefined ? `the ${apiKey.header} header` : `the query parameter ${apiKey.query}`;
  const authenticate = (request: SignedRequest) => {
    const presented = presentedKey(apiKey, request);
    if (presented === undefined || presented === '')
      throw new MissingSignatureError(`${name}: ${where} is absent`);
    if (!matchesCredential(presented, digests)) {
      throw new InvalidSignatureError(`${name}: ${where} matches no configured key`);
    }
  };
  return {
    ...templateProvider(name, options.template, options.secrets, authenticate, CREDENTIAL),
    guessable: true,
  };
}

/** Where an API-key source expects its key: headers to send, or the query string to append. */
export function signApiKey(
  apiKey: ApiKeySpec,
  secret: string,
): { headers: Record<string, string>; query: string } {
  if (apiKey.header !== undefined)
    return { headers: { [apiKey.header]: `${apiKey.prefix}${secret}` }, query: '' };
  return { headers: {}, query: `?${new URLSearchParams({ [apiKey.query ?? '']: secret }).toString()}` };
}
