import type { z } from 'zod';
import { signHmac } from '../hmac.ts';
import { createBuiltinProvider, hmacSource, standardSource } from '../template-sources.ts';
import type { Provider } from '../types.ts';
import { sourceName, type CatalogueProviderOptions } from './signing.ts';

// The catalogue providers whose scheme the template engine expresses are data on it: each module declares its
// scheme as a source of the sources file (`type: hmac` or `type: standard-webhooks`, without its secrets: exactly
// what a user would write), and this one path turns that declaration into the provider of a source.

type WithoutSecrets<T> = Omit<T, 'secrets' | 'secretFiles'>;

/** A body-HMAC scheme: an `hmac` source of the sources file, without its secrets. */
export type HmacTemplate = WithoutSecrets<z.input<typeof hmacSource>>;

/** A catalogue provider's scheme as a sources-file source of a template type, without its secrets. */
export type CatalogueTemplate = HmacTemplate | WithoutSecrets<z.input<typeof standardSource>>;

/** The tolerance an hmac scheme is built with when it signs no timestamp: never read, only checked. */
const UNUSED_TOLERANCE_SECONDS = 300;

/** The declaration as the sources file reads it (defaults filled, rules checked); a TypeError naming the type. */
function parse(type: string, template: CatalogueTemplate) {
  const result = (template.type === 'hmac' ? hmacSource : standardSource).safeParse(template);
  if (!result.success)
    throw new TypeError(`${type}: its template is not a valid source: ${result.error.message}`);
  return result.data;
}

/**
 * The provider of one source of a catalogue type declared as a template: its name checked, its secrets, and a
 * tolerance that, where the scheme signs a timestamp, overrides the provider's documented one.
 */
export function templatedProvider(
  type: string,
  template: CatalogueTemplate,
  options: CatalogueProviderOptions,
): Provider {
  const name = sourceName(type, options.name);
  const source = parse(type, template);
  const secrets = [...options.secrets];
  if (source.type === 'standard-webhooks') {
    const toleranceSeconds = options.toleranceSeconds ?? source.toleranceSeconds;
    return createBuiltinProvider({ ...source, name, secrets, toleranceSeconds }, UNUSED_TOLERANCE_SECONDS);
  }
  const timestamp = source.hmac.timestamp && {
    ...source.hmac.timestamp,
    toleranceSeconds: options.toleranceSeconds ?? source.hmac.timestamp.toleranceSeconds,
  };
  const hmac = timestamp ? { ...source.hmac, timestamp } : source.hmac;
  return createBuiltinProvider({ ...source, hmac, name, secrets }, UNUSED_TOLERANCE_SECONDS);
}

/**
 * The signer of a body-HMAC scheme that signs the body alone: the signature header's value its sender would send
 * for this body (tests and the dev CLI).
 */
export function bodySigner(
  type: string,
  template: CatalogueTemplate,
): (options: { payload: string | Uint8Array; secret: string }) => string {
  const source = parse(type, template);
  if (source.type !== 'hmac' || source.hmac.signed !== '{body}') {
    throw new TypeError(`${type}: a body signer is for an hmac template signing {body} alone`);
  }
  const { hmac } = source;
  return ({ payload, secret }) => signHmac({ hmac, secret, payload })[hmac.header] as string;
}
