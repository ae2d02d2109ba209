import type { Provider } from '../types.ts';
import type { CertificateFetch } from './certificates.ts';
import type { PayloadPaths, ProviderFacts } from './facts.ts';
import type { CatalogueProviderOptions } from './signing.ts';
import type { CatalogueTemplate } from './template-data.ts';

/** What a source of a catalogue type is configured with: the common options, plus `url` where it is signed. */
export interface CatalogueSourceOptions extends CatalogueProviderOptions {
  /** The public URL the provider sends to, for providers that sign it (`facts.requiredOptions` lists `url`). */
  url?: string;
  /** The verify token typed into the provider's dashboard, for a GET subscription handshake (Meta). */
  verifyToken?: string;
  /** How AWS SNS and PayPal fetch their signing certificates; unset: the global fetch. */
  certificateFetch?: CertificateFetch;
}

/**
 * One catalogue provider as its module declares it (`catalogue/providers/<type>.ts` exports it as `definition`);
 * the catalogue index loads every module of that folder and builds its entries and the certificate types from them. A
 * templated provider's sample delivery is built from its template and `sample`; a coded one's is written in
 * `@webhook-inbox/samples`.
 * Its paths into payloads (event facts, subject, excerpt) are JSON pointers, with `*` for each element of an array
 * (`PayloadPaths`); ../provider-paths.ts keys them by type for the event page, the subjects and the alerts. Its
 * scheme is either data, a `template` (a source of the sources file: template-data.ts builds it), or code, `create`.
 */
export type CatalogueDefinition = DefinitionFields &
  (
    | {
        /** The scheme as a sources-file source without its secrets (`type: hmac`, `type: standard-webhooks`). */
        template: CatalogueTemplate;
        create?: undefined;
      }
    | {
        /** The provider for one source; throws TypeError or RangeError on bad options, at start-up. */
        create: (options: CatalogueSourceOptions) => Provider;
        template?: undefined;
      }
  );

/**
 * A templated provider's sample delivery, as data: an event type its sender sends, and the body's other fields.
 * `@webhook-inbox/samples` builds and signs the delivery from the template, putting the event key and type where the
 * template reads them; a coded provider's sample is written there instead.
 */
export interface CatalogueSample {
  type: string;
  body?: Record<string, unknown>;
}

interface DefinitionFields extends PayloadPaths {
  /** The source type (`github`), also the default source name and URL segment. */
  type: string;
  facts: ProviderFacts;
  sample?: CatalogueSample;
  /** The hosts its signing certificates are fetched from, for the types that fetch one (certificates.ts). */
  certificateHosts?: readonly (string | RegExp)[];
}

/** The options of a provider that signs its public URL; the factory checks that the URL is one. */
export const withUrl = (options: CatalogueSourceOptions) => ({ ...options, url: options.url ?? '' });
