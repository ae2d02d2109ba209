/**
 * What a catalogue provider does, as its documentation says, in the form the sources framework and
 * docs/providers.md use: one object per provider, next to the code that implements it.
 */
export interface ProviderFacts {
  /** How a request is authenticated, in one line. */
  scheme: string;
  /** Where the event key comes from, and what happens without it. */
  eventKey: string;
  /** Where the event type comes from. */
  eventType: string;
  /** The default tolerance of a signed timestamp in seconds, or `undefined` when no timestamp is signed. */
  toleranceSeconds: number | undefined;
  /** The provider's retry schedule, which bounds how long event keys must be kept. */
  retries: string;
  /** What differs from the common pattern and trips people up. */
  quirks: string;
  /** Options the source must set besides its secrets (e.g. `url`, the public URL the provider signs). */
  requiredOptions: readonly string[];
  /** The provider's webhook documentation. */
  docs: string;
}
