import type { Provider } from '../types.ts';
import { bodyHmacProvider, signBodyHmac, type BodyHmacScheme } from './body-hmac.ts';
import type { ProviderFacts } from './facts.ts';
import { bodyString, withAction, type CatalogueProviderOptions } from './signing.ts';
import type { CatalogueDefinition } from './definition.ts';
export const SEGMENT_FACTS: ProviderFacts = {
  scheme: "X-Signature: <hex HMAC-SHA1 of the raw body>, keyed with the Webhooks destination's shared secret",
  eventKey:
    "the body's messageId (set once per message by the source, kept by retries); refused as invalid_payload when absent",
  eventType:
    'the body\'s type, plus "." and the event name for track calls (track.Order Completed, identify)',
  toleranceSeconds: undefined,
  retries:
    'failed calls to a cloud-mode destination are retried for four hours with randomized exponential backoff',
  quirks: 'HMAC-SHA1; track calls typed with their event name',
  requiredOptions: [],
  docs: 'https://segment.com/docs/connections/destinations/catalog/webhooks/',
};

const SEGMENT: BodyHmacScheme = {
  type: 'segment',
  signature: { header: 'x-signature', prefix: '', digest: 'sha1', encoding: 'hex', sender: 'Segment' },
  kept: [],
  identify: (name, _request, body) => ({
    eventId: bodyString(name, body, 'messageId'),
    type: withAction(bodyString(name, body, 'type'), body.event),
  }),
};

/**
 * Segment's Webhooks destination: `X-Signature` is the hex HMAC-SHA1 of the raw body keyed with the destination's
 * shared secret. Nothing else is signed.
 *
 * Event key: the message's `messageId`. Type: the message `type`, and for `track` calls the `event` name, e.g.
 * `track.Order Completed`.
 *
 * @example
 * const segment = segmentProvider({ secrets: [process.env.SEGMENT_WEBHOOK_SECRET] });
 */
export function segmentProvider(options: CatalogueProviderOptions): Provider {
  return bodyHmacProvider(SEGMENT, options);
}

/** The `X-Signature` header value Segment would send for this body, for tests and the dev CLI. */
export function signSegment({ payload, secret }: { payload: string | Uint8Array; secret: string }): string {
  return signBodyHmac(SEGMENT, payload, secret);
}

/** The catalogue's segment: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'segment',
  facts: SEGMENT_FACTS,
  create: segmentProvider,
  subject: ['/userId', '/anonymousId', '/traits/email'],
};
