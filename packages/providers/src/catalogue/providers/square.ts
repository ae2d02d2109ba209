import { decodeJsonBody, hmacKey, toBytes } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { hmacOf } from '../../signature-kernel.ts';
import {
  checkHmac,
  bodyKeyedEvent,
  publicUrl,
  secretKeys,
  signatureHeader,
  sourceName,
  type CatalogueProviderOptions,
} from '../signing.ts';
import { withUrl, type CatalogueDefinition } from '../definition.ts';

export const SQUARE_FACTS: ProviderFacts = {
  scheme:
    'x-square-hmacsha256-signature: <base64 HMAC-SHA256 of notification URL + raw body>, keyed with the ' +
    "subscription's signature key",
  eventKey: "the body's event_id; refused as invalid_payload when absent",
  eventType: "the body's type (payment.updated)",
  toleranceSeconds: undefined,
  retries:
    'for up to 72 hours after the event: after 1, 2, 4, 8, 16 and 32 minutes, then hourly (retries 7 to 78), then discarded',
  quirks:
    'the notification URL is signed: set url exactly as in the subscription (behind a proxy the receiver cannot know it)',
  requiredOptions: ['url'],
  docs: 'https://developer.squareup.com/docs/webhooks/step3validate',
};

export interface SquareProviderOptions extends CatalogueProviderOptions {
  /**
   * The notification URL exactly as entered in the webhook subscription (scheme, host, path and query): Square
   * signs it with the body, and behind a proxy the receiver cannot know it.
   */
  url: string;
}

/**
 * Square: `x-square-hmacsha256-signature` is the base64 HMAC-SHA256 of the subscription's notification URL
 * followed by the raw body, keyed with the subscription's signature key. Nothing else is signed: no timestamp, and
 * the URL must be configured as Square has it. (The legacy SHA-1 `x-square-signature` is not accepted.)
 *
 * Event key: the body's `event_id`. Type: its `type`, e.g. `payment.updated`.
 *
 * @example
 * const square = squareProvider({ secrets: [signatureKey], url: 'https://hooks.example.com/webhooks/square' });
 */
export function squareProvider(options: SquareProviderOptions): Provider {
  const name = sourceName('square', options.name);
  const keys = secretKeys(name, options.secrets);
  const url = publicUrl(name, options.url);

  return {
    name,
    verify(request: SignedRequest): VerifiedEvent {
      const header = signatureHeader(name, request, 'x-square-hmacsha256-signature', 'Square');
      checkHmac(
        name,
        keys,
        [url, request.rawBody],
        header,
        `x-square-hmacsha256-signature (over ${url} and the body)`,
      );
      return bodyKeyedEvent(name, decodeJsonBody(name, request.rawBody), 'event_id', 'type');
    },
  };
}

/** The `x-square-hmacsha256-signature` value Square would send to `url` with this body. */
export function signSquare({
  payload,
  secret,
  url,
}: {
  payload: string | Uint8Array;
  secret: string;
  url: string;
}): string {
  return hmacOf('sha256', hmacKey(secret), [url, toBytes(payload)]).toString('base64');
}

/** The catalogue's square: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'square',
  facts: SQUARE_FACTS,
  create: (options) => squareProvider(withUrl(options)),
  eventFacts: [{ label: 'Merchant', paths: ['/merchant_id'] }],
  subject: ['/merchant_id', '/data/id'],
  caseless: { eventId: true },
  excerpt: ['/event_id', '/type', '/created_at', '/merchant_id', '/data/type', '/data/id'],
};
