import type { Provider } from '../../types.ts';
import { bodySigner, templatedProvider } from '../template-data.ts';
import type { ProviderFacts } from '../facts.ts';
import type { CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';
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

/** The catalogue's segment: its facts, its scheme as template data, its paths into payloads. */
export const definition = {
  type: 'segment',
  facts: SEGMENT_FACTS,
  template: {
    type: 'hmac',
    hmac: { header: 'X-Signature', algorithm: 'sha1', encoding: 'hex' },
    eventKey: { pointer: '/messageId' },
    eventType: { pointer: '/type', required: true, suffix: '/event' },
  },
  subject: ['/userId', '/anonymousId', '/traits/email'],
  caseless: { subject: ['/traits/email'] },
} satisfies CatalogueDefinition;

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
  return templatedProvider('segment', definition.template, options);
}

/** The `X-Signature` header value Segment would send for this body, for tests and the dev CLI. */
export const signSegment = bodySigner('segment', definition.template);
