import type { CertificateFetch } from './catalogue/certificates.ts';
import { checkEventLimits } from './shared.ts';
import { shopifyProvider } from './shopify.ts';
import { PROVIDER_NAME, standardWebhooksProvider } from './standard-webhooks.ts';
import { stripeProvider } from './stripe.ts';
import { createSourceProvider, type SourceDefinition } from './sources.ts';
import type { Provider, Reception, SignedRequest } from './types.ts';

/** One Standard Webhooks sender, received at `/webhooks/<name>`. */
export interface StandardWebhooksSender {
  name: string;
  secrets: string[];
}

export interface ProvidersConfig {
  stripeSecrets?: string[];
  shopifySecrets?: string[];
  standardWebhooks?: StandardWebhooksSender[];
  /** Sources declared in the sources file (sources-file.ts); a name may not repeat one of the environment's. */
  sources?: SourceDefinition[];
  /** Applies to every provider with a signed timestamp (Stripe, Standard Webhooks); must be > 0. */
  toleranceSeconds: number;
  /**
   * How the certificate-based sources (AWS SNS, PayPal) fetch the certificate a message names, after its URL passed
   * their host allow-list; unset: the global fetch. Tests serve certificates from a loopback server through it.
   */
  certificateFetch?: CertificateFetch;
}

const RESERVED_NAMES: ReadonlySet<string> = new Set(['stripe', 'shopify']);

function assertSenderName(name: string): void {
  if (!PROVIDER_NAME.test(name)) {
    throw new Error(
      `Standard Webhooks sender name ${JSON.stringify(name)} is invalid: use lower-case letters, digits and "-"`,
    );
  }
  if (RESERVED_NAMES.has(name)) {
    throw new Error(`Standard Webhooks sender name "${name}" is reserved for the built-in ${name} provider`);
  }
}

/** The reception, its events within the length limits every provider shares. */
function receptionWithinLimits(reception: Reception): Reception {
  if (reception.kind === 'events') reception.events.forEach(checkEventLimits);
  return reception;
}

/** The provider, with the length limits every provider shares applied to what it verified. */
function withEventLimits(provider: Provider): Provider {
  const receive = provider.receive?.bind(provider);
  const receiveAsync = provider.receiveAsync?.bind(provider);
  return {
    name: provider.name,
    verify: (request: SignedRequest, now: Date) => checkEventLimits(provider.verify(request, now)),
    ...(receive && {
      receive: (request: SignedRequest, now: Date) => receptionWithinLimits(receive(request, now)),
      acceptsGet: provider.acceptsGet,
      batches: provider.batches,
    }),
    ...(receiveAsync && {
      receiveAsync: async (request: SignedRequest, now: Date) =>
        receptionWithinLimits(await receiveAsync(request, now)),
    }),
    ...((receive ?? receiveAsync) && { response: provider.response }),
    ...(provider.signatureRefusalStatus && { signatureRefusalStatus: provider.signatureRefusalStatus }),
    ...(provider.guessable && { guessable: provider.guessable }),
  };
}

/**
 * The configured providers by name, the name being the URL segment (`/webhooks/<name>`). A provider is present
 * only when it has at least one secret; every event it verifies has a key, type and kept headers of at most
 * `MAX_EVENT_FIELD_LENGTH` characters. Throws on a bad configuration (tolerance <= 0, a malformed secret, a
 * clashing or repeated name), so a misconfigured receiver fails at startup, not on its first request.
 *
 * @example
 * const providers = createProviders({ stripeSecrets: ['whsec_...'], toleranceSeconds: 300 });
 * const provider = providers.get(request.params.provider); // undefined → 404 unknown_provider
 */
export function createProviders(config: ProvidersConfig): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  const { toleranceSeconds } = config;
  if (config.stripeSecrets !== undefined && config.stripeSecrets.length > 0) {
    providers.set('stripe', stripeProvider({ secrets: config.stripeSecrets, toleranceSeconds }));
  }
  if (config.shopifySecrets !== undefined && config.shopifySecrets.length > 0) {
    providers.set('shopify', shopifyProvider({ secrets: config.shopifySecrets }));
  }
  const seen = new Set<string>();
  for (const { name, secrets } of config.standardWebhooks ?? []) {
    assertSenderName(name);
    if (seen.has(name)) {
      throw new Error(`Standard Webhooks sender "${name}" is configured more than once`);
    }
    seen.add(name);
    if (secrets.length === 0) continue;
    providers.set(name, standardWebhooksProvider({ name, secrets, toleranceSeconds }));
  }
  for (const source of config.sources ?? []) {
    if (providers.has(source.name) || seen.has(source.name)) {
      throw new Error(
        `source "${source.name}" is also configured by the environment; give one of them another name`,
      );
    }
    try {
      providers.set(source.name, createSourceProvider(source, toleranceSeconds, config.certificateFetch));
    } catch (error) {
      const message = (error as Error).message;
      throw new Error(
        message.startsWith(`${source.name}:`)
          ? `source "${source.name}"${message.slice(source.name.length)}`
          : `source "${source.name}": ${message}`,
        { cause: error },
      );
    }
  }
  for (const [name, provider] of providers) providers.set(name, withEventLimits(provider));
  return providers;
}

/**
 * Parses the `STANDARD_WEBHOOKS` environment value: comma-separated `name=secret` entries, a `|` between the
 * secrets of one sender during a rotation. Names are lower-case letters, digits and `-`, and neither `stripe`
 * nor `shopify`. Secrets are `whsec_<base64>` (base64 never contains `,` or `|`; its `=` padding is fine, the
 * name ends at the first `=`). Whitespace around entries, names and secrets is ignored; an empty or unset value
 * means no senders. Errors name the entry by position and name, never by secret.
 *
 * @example
 * parseStandardWebhooksEnv('svix=whsec_a|whsec_b,acme=whsec_c');
 * // → [{ name: 'svix', secrets: ['whsec_a', 'whsec_b'] }, { name: 'acme', secrets: ['whsec_c'] }]
 */
export function parseStandardWebhooksEnv(value: string | undefined): StandardWebhooksSender[] {
  if (value === undefined || value.trim() === '') return [];
  const senders: StandardWebhooksSender[] = [];
  const seen = new Set<string>();
  value.split(',').forEach((entry, index) => {
    const where = `STANDARD_WEBHOOKS entry #${index + 1}`;
    if (entry.trim() === '') {
      throw new Error(`${where} is empty; expected "name=whsec_...[|whsec_...]" entries separated by ","`);
    }
    const eq = entry.indexOf('=');
    if (eq === -1) {
      throw new Error(`${where} has no "="; expected "name=whsec_...[|whsec_...]"`);
    }
    const name = entry.slice(0, eq).trim();
    try {
      assertSenderName(name);
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}`, { cause: error });
    }
    if (seen.has(name)) {
      throw new Error(`${where}: sender "${name}" appears more than once`);
    }
    seen.add(name);
    const secrets = entry
      .slice(eq + 1)
      .split('|')
      .map((secret) => secret.trim());
    if (secrets.some((secret) => secret === '')) {
      throw new Error(`${where} ("${name}") has an empty secret`);
    }
    senders.push({ name, secrets });
  });
  return senders;
}
